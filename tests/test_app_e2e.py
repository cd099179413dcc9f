"""The real app in headless Chromium on the bundled model: prefill, three steps, back, one step, change the
temperature, run to end; the chips, the chart and the stop reason must be on the page. Screenshots go to
artifacts/."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.pages import new_page

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(port: int, timeout_s: float = 180, **env_vars: str) -> subprocess.Popen:
    """`python app.py --port PORT` (with `env_vars` in its environment), returned once it answers HTTP."""
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


def generated(page) -> int:
    return page.locator("#step-chips .tok.gen").count()


def click_and_wait(page, button: str, expect_generated: int) -> None:
    page.click(button)
    page.wait_for_function(
        f"document.querySelectorAll('#step-chips .tok.gen').length === {expect_generated}", timeout=60_000
    )


def test_prefill_step_back_step_then_run_to_end_in_the_browser(app_url, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    page = new_page(browser, {"width": 1280, "height": 800})
    page.goto(app_url)
    page.click("#btn-prefill")
    page.wait_for_selector("#step-chips .tok.prompt", timeout=60_000)
    page.wait_for_selector("#step-dist .js-plotly-plot .bars path")
    assert "not chosen yet" in page.inner_text("#step-dist")
    for n in (1, 2, 3):
        click_and_wait(page, "#btn-step", n)
    page.screenshot(path=str(ARTIFACTS / "e2e-three-steps.png"))
    click_and_wait(page, "#btn-back", 2)
    click_and_wait(page, "#btn-step", 3)
    temperature = page.locator("#knob-temperature input[type=number]")
    temperature.fill("0.5")
    temperature.press("Enter")
    page.click("#btn-run-end")
    page.wait_for_selector("#step-stop [data-stop]:not([data-stop=''])", timeout=180_000)
    assert "finished" in page.inner_text("#step-stop")
    assert generated(page) > 3
    assert page.locator("#step-dist .js-plotly-plot .bars path").count() > 1
    assert "step" in page.inner_text("#step-dist")
    assert "TTFT" in page.inner_text("#step-numbers")
    page.screenshot(path=str(ARTIFACTS / "e2e-run-to-end.png"), full_page=True)
    page.close()
