"""A real redis-server for the tests of the shared round store: Debian's package (the Makefile's `hall-tools` installs
it, as `make hall` needs it), started on a free port with no persistence, and each test's rounds in an empty
database."""

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ui.launch import free_port

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
# the store's two homes, as the round tests are parametrized over them
HOMES = ("local", "redis")


@contextmanager
def redis_server(timeout_s: float = 30) -> Iterator[str]:
    """A redis-server of its own on 127.0.0.1 and a free port; yields its address (redis://127.0.0.1:PORT/0)."""
    import redis

    if not Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed: `make hall-tools` installs Debian's package (apt-get install)")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="lab-redis-") as where:
        args = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        proc = subprocess.Popen([*args, "--dir", where], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        url = f"redis://127.0.0.1:{port}/0"
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + timeout_s
        try:
            while True:  # it answers PING once it listens
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"redis-server did not answer on port {port}") from None
                    time.sleep(0.05)
            yield url
        finally:
            client.close()
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


def emptied(url: str) -> str:
    """The database at `url`, emptied (a test's rounds start alone)."""
    import redis

    with redis.Redis.from_url(url) as client:
        client.flushdb()
    return url
