"""Starting the app as its own process and driving it in a headless browser: what the browser tests and the
benchmarks that load the app (`bench/classroom_load.py`, `bench/browser_step.py`, `bench/space_build.py`) share."""

import os
import socket
import subprocess
import sys
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


def start_app(port: int, timeout_s: float = 600, **env_vars: str) -> subprocess.Popen:
    """`python app.py --port PORT` (with `env_vars` in its environment), returned once it answers HTTP: loading the
    model and building ten tabs takes tens of seconds alone, minutes on a machine busy with other work."""
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", **env_vars}
    cmd = [sys.executable, "app.py", "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the app exited with code {proc.returncode} before answering")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close()
            return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError(f"the app did not answer on port {port} within {timeout_s} s")
