"""The lecture hall: several app processes behind HAProxy, which keeps each student on one of them by a cookie.

    python -m deploy.hall [--replicas N] [--host 127.0.0.1] [--port 7860]        (or `make hall REPLICAS=N`)

One app process holds a class of about 60 on two cores: its handlers share one interpreter lock
(docs/measurements/serving.md). The hall starts N of them (`REPLICAS`, by default the machine's cores) on the ports
after `--port`, each told which one it is (`DECODING_LAB_REPLICA=2/4`: the pages that show a server's own traffic
name it), and HAProxy in front on `--port` (deploy/haproxy.cfg). A student's first request sets a cookie naming the
replica that served it; every later request of that browser goes there, where its run and KV cache live. A replica
that refuses a connection (a killed one) is out of rotation at once, and its students go to another (their page
says their run was lost with its server); the hall starts it again. Each student's run stays on its replica; the
class rounds live in one redis-server the hall starts first (deploy/redis.conf, on the port after the replicas'),
passed to every replica as `--store`, so a round started on one replica is joined from all of them and goes on when
a replica dies.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ui.launch import start_app  # noqa: E402

CONFIG = ROOT / "deploy" / "haproxy.cfg"
MARKER = "# replicas: one server line each, written by deploy/hall.py"
COOKIE = "lab_replica"  # the cookie HAProxy sets (deploy/haproxy.cfg): which replica a browser stays on
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"  # Debian puts it in sbin, off a user's PATH
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CONFIG = ROOT / "deploy" / "redis.conf"


def replica_name(index: int) -> str:
    """The replica's name in HAProxy and in its cookie: r1, r2, ..."""
    return f"r{index}"


def haproxy_config(ports: list[int], template: Path = CONFIG) -> str:
    """deploy/haproxy.cfg with one server line per replica (its port), after the marker."""
    text = template.read_text(encoding="utf-8")
    if MARKER not in text:
        raise ValueError(f"{template} has no line {MARKER!r}: the hall cannot say where its replicas go")
    servers = "".join(
        f"\n    server {replica_name(i)} 127.0.0.1:{port} check cookie {replica_name(i)}"
        for i, port in enumerate(ports, start=1)
    )
    return text.replace(MARKER, MARKER + servers)


@dataclass
class Hall:
    """N replicas and HAProxy in front; `start()` returns once the proxy answers and every replica is up."""

    replicas: int
    port: int
    host: str = "127.0.0.1"
    restart: bool = True  # a replica that exits is started again
    env: dict[str, str] = field(default_factory=dict)
    apps: list[subprocess.Popen | None] = field(default_factory=list)
    proxy: subprocess.Popen | None = None
    store: subprocess.Popen | None = None  # the redis-server the replicas share their class rounds in
    _dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="decoding-lab-hall-")))
    _closing: threading.Event = field(default_factory=threading.Event)

    @property
    def ports(self) -> list[int]:
        return [self.port + i for i in range(1, self.replicas + 1)]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    @property
    def store_port(self) -> int:
        return self.port + self.replicas + 1

    @property
    def store_url(self) -> str:
        return f"redis://127.0.0.1:{self.store_port}/0"

    def start(self) -> "Hall":
        if self.replicas < 1:
            raise ValueError(f"replicas must be at least 1, got {self.replicas}")
        if not Path(HAPROXY).exists():
            raise RuntimeError(
                "haproxy is not installed: `make hall` installs Debian's package (apt-get install haproxy)"
            )
        self._start_store()
        self.apps = [None] * self.replicas
        # the replicas load the model side by side (each its own copy), then the proxy opens the door
        starts = [threading.Thread(target=self._start_app, args=(i,)) for i in range(self.replicas)]
        for t in starts:
            t.start()
        for t in starts:
            t.join()
        missing = [replica_name(i + 1) for i, app in enumerate(self.apps) if app is None]
        if missing:
            self.stop()
            raise RuntimeError(f"replicas {', '.join(missing)} did not start (their logs: {self._dir})")
        cfg = self._dir / "haproxy.cfg"
        cfg.write_text(haproxy_config(self.ports), encoding="utf-8")
        env = {**os.environ, "HALL_PORT": str(self.port), "HALL_HOST": self.host}
        log = open(self._dir / "haproxy.log", "wb")  # noqa: SIM115 -- open as long as the proxy runs
        self.proxy = subprocess.Popen([HAPROXY, "-db", "-f", str(cfg)], env=env, stdout=log, stderr=log)
        self._wait_for_proxy()
        if self.restart:
            threading.Thread(target=self._watch, daemon=True).start()
        return self

    def kill(self, index: int) -> None:
        """Kill replica `index` (1-based) at once, as a crash would (the tests' and the demo's failure)."""
        app = self.apps[index - 1]
        if app is not None:
            app.kill()
            app.wait()

    def stop(self) -> None:
        self._closing.set()
        for proc in [self.proxy, *self.apps, self.store]:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in [self.proxy, *self.apps, self.store]:
            if proc is not None:
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()

    def _start_store(self, timeout_s: float = 30) -> None:
        """The class rounds' redis-server (deploy/redis.conf), answering before any replica starts."""
        if not Path(REDIS_SERVER).exists():
            raise RuntimeError(
                "redis-server is not installed: `make hall` installs Debian's package (apt-get install redis-server)"
            )
        log = open(self._dir / "redis.log", "wb")  # noqa: SIM115 -- open as long as the server runs
        args = [REDIS_SERVER, str(REDIS_CONFIG), "--port", str(self.store_port), "--dir", str(self._dir)]
        self.store = subprocess.Popen(args, stdout=log, stderr=log)
        deadline = time.monotonic() + timeout_s
        while True:
            try:  # it answers once it listens
                with socket.create_connection(("127.0.0.1", self.store_port), timeout=2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if self.store.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not answer on port {self.store_port}: {self._dir / 'redis.log'}")
            time.sleep(0.1)

    def _start_app(self, i: int) -> None:
        env = {**self.env, "DECODING_LAB_REPLICA": f"{i + 1}/{self.replicas}", "DECODING_LAB_STORE": self.store_url}
        try:
            self.apps[i] = start_app(self.ports[i], log=self._dir / f"{replica_name(i + 1)}.log", **env)
        except RuntimeError as err:
            print(f"{replica_name(i + 1)}: {err}", file=sys.stderr)

    def _wait_for_proxy(self, timeout_s: float = 60) -> None:
        """Until the proxy has sent a new browser to every replica: each is in rotation (a replica the proxy tried
        before it listened stays out until its checks pass again, and the class's first students would all land on
        the others)."""
        import urllib.request

        names, seen = {replica_name(i + 1) for i in range(self.replicas)}, set()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proxy.poll() is not None:
                raise RuntimeError(f"haproxy exited ({self.proxy.returncode}): {self._dir / 'haproxy.log'}")
            try:
                with urllib.request.urlopen(self.url, timeout=5) as answer:  # no cookie: a new browser
                    for cookie in answer.headers.get_all("Set-Cookie") or []:
                        seen.add(cookie.split(";")[0].removeprefix(f"{COOKIE}="))
                if names <= seen:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"haproxy did not send a browser to each of {sorted(names - seen)} within {timeout_s} s")

    def _watch(self) -> None:
        """Start again a replica that exited (HAProxy takes it back into rotation once it answers its checks)."""
        while not self._closing.wait(1.0):
            for i, app in enumerate(self.apps):
                if app is not None and app.poll() is not None and not self._closing.is_set():
                    print(f"{replica_name(i + 1)} exited ({app.returncode}); starting it again", file=sys.stderr)
                    self.apps[i] = None
                    self._start_app(i)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=int(os.environ.get("REPLICAS") or os.cpu_count() or 1))
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", 7860)))
    args = parser.parse_args(argv)
    hall = Hall(args.replicas, args.port, args.host)
    print(f"starting {args.replicas} replicas on ports {hall.ports[0]}-{hall.ports[-1]} ...", file=sys.stderr)
    hall.start()
    print(
        f"the hall is open on {hall.url} ({args.replicas} replicas behind HAProxy, their class rounds in Redis at "
        f"{hall.store_url}; Ctrl-C closes it)"
    )
    stopped = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())
    stopped.wait()
    hall.stop()


if __name__ == "__main__":
    main()
