"""The real app in headless Chromium on the bundled model: prefill, three steps, back, one step, change the
temperature, run to end; the chips, the chart and the stop reason must be on the page. Screenshots go to artifacts/.
(The Step tab's charts are HTML: the plotly charts gradio replaces are checked on the sandbox, test_plain_e2e.py.)"""

import pytest

from tests.helpers.pages import ARTIFACTS, idle, new_page

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


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
    page.goto(f"{app_url}?tab=step")  # the app opens on Start here
    page.click("#step-prefill")
    page.wait_for_selector("#step-chips .tok.prompt", timeout=60_000)
    page.wait_for_selector("#step-dist .lc-bar")
    assert "not chosen yet" in page.inner_text("#step-dist")
    idle(page)
    for n in (1, 2, 3):
        click_and_wait(page, "#step-step", n)
    page.screenshot(path=str(ARTIFACTS / "e2e-three-steps.png"))
    click_and_wait(page, "#step-back", 2)
    click_and_wait(page, "#step-step", 3)
    idle(page)  # the panels below the chart follow each click
    temperature = page.locator("#step-temperature input[type=number]")
    temperature.fill("0.5")
    temperature.press("Enter")
    page.click("#step-run-end")
    page.wait_for_selector("#step-stop [data-stop]:not([data-stop=''])", timeout=180_000)
    assert "finished" in page.inner_text("#step-stop")
    assert generated(page) > 3
    assert page.locator("#step-dist .lc-bar").count() > 1
    assert "step" in page.inner_text("#step-dist")
    assert "TTFT" in page.inner_text("#step-numbers")
    page.screenshot(path=str(ARTIFACTS / "e2e-run-to-end.png"), full_page=True)
    page.close()
