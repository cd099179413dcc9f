"""While Run N streams a run, the Time chart grows with it (a column per token as the views arrive, not the
placeholder until the end), and once it has run its N the stop line says it waits (or that the run finished)."""

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import idle, new_page
from tests.helpers.step import more_settings

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

# every count of the Time chart's columns the page drew, recorded in the page as each change lands (a poll from the
# test could miss a view that lasted a quarter of a second)
RECORD = """() => {
  window.__columns = [];
  const count = () => document.querySelectorAll('#step-time .lc-col').length;
  new MutationObserver(() => {
    const n = count();
    if (window.__columns.at(-1) !== n) window.__columns.push(n);
  }).observe(document.querySelector('#step-time').parentElement, {subtree: true, childList: true});
}"""


def test_the_time_chart_grows_while_run_n_streams(browser, app_url):
    page = new_page(browser, {"width": 1280, "height": 720})
    page.goto(f"{app_url}?tab=step&projector=0")
    page.locator("#step-prefill").wait_for()
    idle(page)
    page.click("#step-prefill")
    # the prompt read: its first distribution drawn, no token chosen yet (the Time chart waits for the first Step)
    page.wait_for_function(
        "() => { const t = document.querySelector('#step-dist .lc-head'); return t && t.textContent.includes('not "
        "chosen yet'); }",
        timeout=120_000,
    )
    idle(page)
    page.evaluate(RECORD)
    more_settings(page)  # Run N and its box wait there
    box = page.locator("#step-n-steps input")
    box.fill("12")
    box.press("Enter")
    page.click("#step-run-n")
    # the run over: waiting for the next press (12 tokens made), or finished (its end, or max new tokens, came first)
    expect(page.locator("#step-stop")).to_contain_text(re.compile("waiting|finished"), timeout=180_000)
    idle(page)
    columns = page.evaluate("window.__columns")
    page.close()
    # more than the final count: the chart was drawn with some of the run's tokens before the run ended
    assert len([n for n in columns if 1 < n < columns[-1]]) >= 1, columns
