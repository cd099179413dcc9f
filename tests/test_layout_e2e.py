"""Every tab of the real app in headless Chromium: WCAG AA contrast (axe-core's colour-contrast rule and the charts'
text) as each tab first opens; at 800 px every tab reachable with no chart title over another or over a plot area;
at 1280x720, in normal and in projector mode, each lesson's main button and its first chart on one screen after the
action; at 800 px and at 1280x720 after each action, no chart text cut off or covered; and projector mode's one-row
tab bar, remembered on reload. Screenshots of each tab go to artifacts/."""

import re

import pytest
from playwright.sync_api import expect

from tests.contrast import contrast_problems
from tests.pages import (
    PROJECTOR,
    idle,
    new_page,
    not_drawn_whole,
    set_number,
    slider_ends_cut,
    texts_over_plots,
    texts_over_texts,
    until,
)
from tests.test_app_e2e import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


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
        overlaps[title] = texts_over_texts(page) + texts_over_plots(page) + slider_ends_cut(page)
        page.screenshot(path=str(ARTIFACTS / f"e2e-800px-tab{k + 1}.png"))
    page.close()
    assert overlaps == {title: [] for title in titles}


def two_steps(page) -> None:
    """The JSON preset's first Step is all forced (no chart); the second samples."""
    for _ in range(2):
        page.click("#cd-step")
        idle(page)


def one_batch_run(page) -> None:
    """Run with batch 2 alone: the same page as with every size, in a quarter of the time."""
    for size in ("4", "8"):
        page.locator("#batching-sizes").get_by_label(size, exact=True).uncheck()
    page.click("#batching-run")


def round_after_prefill(page) -> None:
    page.click("#spec-prefill")
    idle(page)
    page.click("#spec-round")


def cooler(page) -> None:
    set_number(page, "sandbox-temperature", 0.5)


# each lesson's main action, the control that starts it, the first chart it draws, and its "Try this" accordion (if
# it has one): after the action both share the 1280x720 screen, scrolled to the control, with "Try this" open or
# closed, in projector mode too
ONE_SCREEN = {
    "step": (lambda page: page.click("#btn-prefill"), "#btn-prefill", "#step-dist", "#step-try"),
    "sandbox": (cooler, "#sandbox-temperature", "#sandbox-strategies", None),
    "timing": (lambda page: page.click("#timing-measure"), "#timing-measure", "#timing-roofline", None),
    "serving": (lambda page: page.click("#serving-open"), "#serving-open", "#serving-ticks", None),
    "batching": (one_batch_run, "#batching-run", "#batching-noise", "#batching-try"),
    "beams": (lambda page: page.click("#beam-step"), "#beam-step", "#beam-tree", "#beam-try"),
    "speculative": (round_after_prefill, "#spec-round", "#spec-verify", "#spec-try"),
    "constrained": (two_steps, "#cd-step", "#cd-chart", "#cd-try"),
    "quantization": (lambda page: page.click("#q-step"), "#q-step", "#q-dist", "#q-try"),
}

# the chart holds data (an empty figure, a message in place of its data, has an empty plot area too)
DRAWN = "chart => ((document.querySelector(`${chart} .js-plotly-plot`) || {}).data || []).length > 0"

# the control's box, and the chart's data: its plot areas and x-axis labels (a title above them, a legend below, may
# run past the screen's edge), as [top, bottom] on screen
ON_SCREEN = """
([control, chart]) => {
  const span = es => es.map(e => e.getBoundingClientRect()).filter(b => b.height > 0)
    .reduce(([top, bottom], b) => [Math.min(top, b.top), Math.max(bottom, b.bottom)], [Infinity, -Infinity]);
  const data = [...document.querySelectorAll(`${chart} .nsewdrag, ${chart} .xtick text`)];
  return {control: span([document.querySelector(control)]), chart: span(data), height: innerHeight};
}
"""


def shares_the_screen(page, control: str, chart: str) -> dict:
    """Scroll as a teacher does, to the control at the top of the screen; then where the control and the chart are."""
    page.locator(control).evaluate("e => scrollBy(0, e.getBoundingClientRect().top - 8)")
    where = page.evaluate(ON_SCREEN, [control, chart])
    where["fits"] = all(where[k][0] >= 0 and where[k][1] <= where["height"] for k in ("control", "chart"))
    return where


def acted(browser, app_url: str, tab: str, viewport: dict, query: str = ""):
    """A fresh page on the tab (with the link's `query`), its main action done and its first chart drawn."""
    act, control, chart, _ = ONE_SCREEN[tab]
    page = new_page(browser, viewport)
    page.goto(f"{app_url}?tab={tab}&{query}")
    page.locator(control).wait_for()
    idle(page)
    assert page.evaluate("document.body.classList.contains('projector')") == ("projector=1" in query)
    act(page)
    until(page, lambda: page.evaluate(DRAWN, chart), 300, f"{chart} to draw its data")
    idle(page)
    return page


@pytest.mark.parametrize("query", ["", "projector=1"])
@pytest.mark.parametrize("tab", list(ONE_SCREEN))
def test_at_1280x720_the_main_button_and_its_first_chart_share_the_screen(browser, app_url, tab, query):
    _, control, chart, try_this = ONE_SCREEN[tab]
    page = acted(browser, app_url, tab, PROJECTOR, query)
    shown = {"as it opens": shares_the_screen(page, control, chart)}
    if try_this:
        page.locator(try_this).get_by_text(re.compile(r"^Try this \(")).click()
        idle(page)
        shown["Try this toggled"] = shares_the_screen(page, control, chart)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"e2e-720p-{tab}{'-projector' if query else ''}.png"))
    if tab == "serving":
        page.click("#serving-stop")  # the simulated class would load the machine for two minutes
    drawn_whole = not_drawn_whole(page)
    page.close()
    assert all(where["fits"] for where in shown.values()), shown
    assert drawn_whole == []


@pytest.mark.parametrize("tab", list(ONE_SCREEN))
def test_at_800_px_each_lessons_charts_are_drawn_whole_after_its_action(browser, app_url, tab):
    """A student's narrow window: after the lesson's main action, no chart text is cut at the chart's edge or drawn
    over another text or a plot area, and no slider's end is cut off."""
    page = acted(browser, app_url, tab, {"width": 800, "height": 720})
    drawn_whole = not_drawn_whole(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"e2e-800px-{tab}-after.png"), full_page=True)
    if tab == "serving":
        page.click("#serving-stop")
    page.close()
    assert drawn_whole == []


def test_projector_mode_keeps_the_tab_bar_on_one_row_and_outlives_a_reload(browser, app_url):
    page = new_page(browser, PROJECTOR)
    page.goto(app_url)
    page.locator("#btn-prefill").wait_for()
    page.locator("#projector input").check()
    page.wait_for_function("document.body.classList.contains('projector')")
    tab_height = page.get_by_role("tab").first.bounding_box()["height"]
    until(page, lambda: page.get_by_role("tablist").bounding_box()["height"] < 1.5 * tab_height, 30, "one row of tabs")
    tabs = page.get_by_role("tab").all()
    assert all(t.bounding_box()["height"] == tab_height for t in tabs), "no title wraps inside its tab"
    page.reload()
    page.locator("#btn-prefill").wait_for()
    assert page.evaluate("document.documentElement.classList.contains('projector')")
    expect(page.locator("#projector input")).to_be_checked()
    page.goto(f"{app_url}?projector=0")  # a link's choice wins over the stored one
    page.locator("#btn-prefill").wait_for()
    assert not page.evaluate("document.documentElement.classList.contains('projector')")
    page.close()
