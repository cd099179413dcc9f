"""The Continuous batching tab's "Try this" steps, done through the page's controls in headless Chromium on the
bundled model (CPU): simulated students share forward passes, a shared pass costs less than one pass each, a Step on
the Step by step tab says who shared it, and "Run my steps alone" gives it a pass of its own."""

import re

import pytest

from tests.contrast import contrast_problems
from tests.pages import figure, open_tab, until
from tests.test_app_e2e import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


@pytest.fixture(scope="module")
def page(browser, app_url):
    page = open_tab(browser, app_url, "Continuous batching")
    yield page
    page.get_by_role("tab", name="Continuous batching").click()
    page.get_by_role("button", name="Stop them").click()
    page.close()


def pass_line(page) -> str:
    found = page.get_by_text(re.compile(r"computed (with \d+ other session|alone)"))
    return found.first.inner_text() if found.count() else ""


def test_the_continuous_batching_try_this_steps_do_what_they_say(page):
    # 1. open 8 simulated students for 60 s: the charts go live, and passes hold several students
    page.get_by_role("button", name="Open simulated students").click()
    until(page, lambda: page.locator("#serving-live input").is_checked(), 30, "Live ticked")
    shared = lambda: max(
        next(t for t in figure(page, "serving-ticks")["data"] if t["name"] == "decoding one token")["y"]
    )
    until(page, lambda: shared() >= 2, 60, "a pass shared by two students or more")

    # 2. a pass for k students costs far less than k passes for one (k the largest batch seen)
    def cheaper():
        line = next(t for t in figure(page, "serving-cost")["data"] if t["name"] == "one packed pass (median)")
        by_rows = dict(zip(line["x"], line["y"]))
        k = max(by_rows)
        return k >= 4 and 1 in by_rows and by_rows[k] < k * by_rows[1] / 2

    until(page, cheaper, 60, "a pass of 4 or more students next to a pass of one")
    page.screenshot(path=str(ARTIFACTS / "e2e-serving.png"), full_page=True)
    # 3. on Step by step, a Step says how many other sessions shared its pass (press Step a few times)
    page.get_by_role("tab", name="Step by step").click()
    page.click("#btn-prefill")
    page.wait_for_selector("#step-chips .tok.prompt", timeout=60_000)
    step_until(page, "other session", 5)
    assert re.search(r"computed with \d+ other sessions?: batch \d+", pass_line(page))
    # 4. Run my steps alone: from the next step on (the tick reaches the server beside the click), passes of its own
    page.locator("#step-alone input").check()
    step_until(page, "computed alone, as you asked", 3)
    assert "bit-exact with generate()" in pass_line(page)
    page.locator("#step-alone input").uncheck()


def step_until(page, words: str, tries: int) -> None:
    """Press Step (each time waiting for its token) until the pass line has `words`, at most `tries` times."""
    for _ in range(tries):
        made = page.locator("#step-chips .tok.gen").count()
        page.click("#btn-step")
        page.wait_for_function(
            f"document.querySelectorAll('#step-chips .tok.gen').length === {made + 1}", timeout=60_000
        )
        if words in pass_line(page):
            return
    raise AssertionError(f"{tries} steps and no pass line with {words!r}: {pass_line(page)!r}")


def test_the_continuous_batching_tab_text_and_charts_meet_wcag_aa_contrast(page):
    page.get_by_role("tab", name="Continuous batching").click()
    assert contrast_problems(page) == []
