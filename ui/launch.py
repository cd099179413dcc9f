"""Starting the app as its own process and driving it in a headless browser: what the browser tests and the
benchmarks that load the app (`bench/classroom_load.py`, `bench/browser_cost.py`, `bench/space_build.py`) share."""

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Debian's chromium: playwright cannot download its own browsers on the machines this runs on
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


APP = ["app.py"]  # what `start_app` runs, in ROOT
# what gradio says when its web server took more than its fixed 5 s to start (gradio/http_server.py,
# `Server.run_in_thread`): on a machine loaded with other work the app then exits before it answers
NOT_STARTED_IN_TIME = "Cannot find empty port"


def start_app(
    port: int, timeout_s: float = 600, attempts: int = 3, root: Path = ROOT, log: Path | None = None, **env_vars: str
) -> subprocess.Popen:
    """`python app.py --port PORT` in `root` (this checkout, or another one's app to compare with), with `env_vars` in
    its environment, returned once it answers HTTP: loading the
    model and building ten tabs takes tens of seconds alone, minutes on a machine busy with other work. An app whose
    web server did not start within gradio's 5 s is started again, up to `attempts` times in all; any other exit
    before it answers raises, with the end of what the app wrote. `log`: a file that keeps what the app writes to its
    log (stderr), for a test that reads it."""
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", **env_vars}
    cmd = [sys.executable, *APP, "--port", str(port)]
    deadline = time.monotonic() + timeout_s
    for attempt in range(1, attempts + 1):
        with open(log, "w+b") if log else tempfile.TemporaryFile() as said:
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=said)
            if _answers(proc, port, deadline):
                return proc
            said.seek(0)
            tail = said.read()[-2000:].decode(errors="replace")
        if proc.returncode is None:
            proc.kill()
            raise RuntimeError(f"the app did not answer on port {port} within {timeout_s} s")
        if NOT_STARTED_IN_TIME not in tail or attempt == attempts:
            raise RuntimeError(f"the app exited with code {proc.returncode} before answering:\n{tail}")
    raise ValueError(f"attempts must be at least 1, got {attempts}")  # each attempt above returns or raises


def _answers(proc: subprocess.Popen, port: int, deadline: float) -> bool:
    """Whether the app answers HTTP before `deadline`; False as soon as it exits."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close()
            return True
        except OSError:
            time.sleep(0.5)
    return False
