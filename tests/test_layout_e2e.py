"""Every tab of the real app in headless Chromium: WCAG AA contrast (axe-core's colour-contrast rule and the charts'
text) as each tab first opens, and at 800 px every tab reachable with no chart titles overlapping. Screenshots of
each tab at 800 px go to artifacts/."""

import pytest

from tests.contrast import contrast_problems
from tests.pages import idle, new_page
from tests.test_app_e2e import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

# every text box drawn inside a chart that could collide: subplot and figure titles, annotations, legend entries
CHART_TITLE_OVERLAPS = """
() => {
  const out = [];
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {
    const boxes = [...plot.querySelectorAll('.infolayer .annotation-text, .infolayer .gtitle, .legendtext')]
      .map(t => [t, t.getBoundingClientRect()]).filter(([, b]) => b.width > 0 && b.height > 0);
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i][1], boxes[j][1]];
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 1) out.push(`"${boxes[i][0].textContent}" over "${boxes[j][0].textContent}"`);
      }
  }
  return out;
}
"""


def open_app(browser, app_url, width: int, height: int = 720, scale: float = 1):
    page = new_page(browser, {"width": width, "height": height}, device_scale_factor=scale)
    page.goto(app_url)
    page.locator("#step-buttons").wait_for(timeout=120_000)
    return page


def tab_titles(page) -> list[str]:
    return page.get_by_role("tab").all_inner_texts()


def show(page, title: str) -> None:
    """Open a tab and wait until its charts are drawn (the count of drawn charts on screen holds still for four polls)
    and no event is at work."""
    page.get_by_role("tab", name=title, exact=True).click()
    page.wait_for_function(
        "t => [...document.querySelectorAll('[role=tab]')].some(b => b.textContent === t && "
        "b.getAttribute('aria-selected') === 'true')",
        arg=title,
    )
    page.evaluate("window.__charts = []")
    page.wait_for_function(SETTLED, polling=250, timeout=60_000)
    idle(page)  # and no event the tab's opening started (a link, a redraw) is still changing it


# true once the number of drawn charts on screen has been the same for four polls in a row
SETTLED = """
() => {
  const n = [...document.querySelectorAll('.js-plotly-plot .main-svg')].filter(e => e.getClientRects().length).length;
  window.__charts = (window.__charts || []).concat(n).slice(-4);
  return window.__charts.length === 4 && window.__charts.every(c => c === n);
}
"""


def test_every_tab_meets_wcag_aa_contrast_as_it_opens(browser, app_url):
    page = open_app(browser, app_url, 1280)
    page.click("#btn-prefill")  # the step tab with its chart, chips and panels drawn
    page.wait_for_selector("#step-dist .js-plotly-plot .bars path", timeout=120_000)
    problems = {}
    for title in tab_titles(page):
        show(page, title)
        problems[title] = contrast_problems(page)
    page.close()
    assert problems == {title: [] for title in problems}


def test_at_800_px_every_tab_is_reachable_and_no_chart_titles_overlap(browser, app_url):
    wide = open_app(browser, app_url, 1280)
    titles = tab_titles(wide)
    wide.close()
    page = open_app(browser, app_url, 800)
    page.click("#btn-prefill")  # the step tab with its chart and strategy panels drawn
    page.wait_for_selector("#step-dist .js-plotly-plot .bars path", timeout=120_000)
    assert tab_titles(page) == titles, "every tab has its own button, none behind a menu"
    assert not page.get_by_role("button", name="More tabs").is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    overlaps = {}
    for k, title in enumerate(titles):
        button = page.get_by_role("tab", name=title, exact=True)
        assert button.is_visible()
        show(page, title)
        overlaps[title] = page.evaluate(CHART_TITLE_OVERLAPS)
        page.screenshot(path=str(ARTIFACTS / f"e2e-800px-tab{k + 1}.png"))
    page.close()
    assert overlaps == {title: [] for title in titles}
