"""The Speculative decoding tab in the real app, in headless Chromium on the bundled model: prefill, two rounds,
back, run to end; the guesses, the per-round chart and the side-by-side timing must be on the page. Screenshots go
to artifacts/."""

import pytest

from tests.pages import open_tab
from tests.test_app_e2e import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


@pytest.fixture(scope="module")
def page(app_url, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    page = open_tab(browser, app_url, "Speculative decoding", "#spec-buttons", timeout=120_000)
    yield page
    page.close()


def test_prefill_rounds_back_and_run_to_end_show_guesses_and_the_measured_speedup(page):
    max_new = page.locator("#spec-max-new input[type=number]")
    max_new.fill("30")
    max_new.press("Enter")
    page.locator("#spec-prefill").click()
    page.get_by_text("Prefilled").first.wait_for(timeout=180_000)
    page.locator("#spec-round").click()
    page.get_by_text("Round 1.").first.wait_for(timeout=120_000)
    page.locator("#spec-round").click()
    page.get_by_text("Round 2.").first.wait_for(timeout=120_000)
    assert page.locator("#spec-chips .spec-bonus").count() == 1
    page.screenshot(path=str(ARTIFACTS / "e2e-speculative-round.png"), full_page=True)
    page.locator("#spec-back").click()
    page.get_by_text("Round 1.").first.wait_for(timeout=60_000)
    # the per-round chart holds one round again
    bars = page.evaluate("() => document.querySelector('#spec-run .js-plotly-plot').data[0].x.length")
    assert bars == 1
    page.locator("#spec-end").click()
    # greedy: the speculative text is plain decoding's, token for token, and the page says so beside the timing
    page.locator("#spec-speed").get_by_text("same tokens").first.wait_for(timeout=300_000)
    assert "Plain decoding" in page.locator("#spec-speed").inner_text()
    assert page.evaluate("() => document.querySelector('#spec-timeline .js-plotly-plot').data.length") == 5
    page.screenshot(path=str(ARTIFACTS / "e2e-speculative-run.png"), full_page=True)
