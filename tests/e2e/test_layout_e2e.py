"""Every tab of the real app in headless Chromium: WCAG AA contrast (axe-core's colour-contrast rule and the charts'
text) as each tab first opens; at 800 px every tab reachable with no chart title over another or over a plot area;
at 1280x720, in normal and in projector mode, each lesson's main button and its first chart on one screen after the
action; at 800 px and at 1280x720 after each action, no chart text cut off or covered; and projector mode's one-row
tab bar, remembered on reload. Each lesson is visited once and read at every size and mode from that visit, as a
teacher switches projector mode and a student narrows the window; the same visit, back at 1280x720 with every
accordion opened, reads the glossary's third reading (each term's first use marked after the lesson's main action,
tests/helpers/glossary.py). Screenshots of each tab go to artifacts/."""

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.actions import act
from tests.helpers.contrast import contrast_problems
from tests.helpers.glossary import open_accordions, unmarked_on_the_tab
from tests.helpers.pages import (
    ARTIFACTS,
    NAV_LINKS,
    PROJECTOR,
    current_lesson,
    go_to,
    idle,
    new_page,
    not_drawn_whole,
    shares_the_screen,
    slider_ends_cut,
    texts_over_plots,
    texts_over_texts,
    until,
)
from ui.tabs import TabSpec, specs

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


def open_app(browser, app_url, width: int, height: int = 720):
    page = new_page(browser, {"width": width, "height": height})
    page.goto(f"{app_url}?tab=step")  # the app opens on Start here; these tests begin with a step
    page.locator("#step-buttons").wait_for(timeout=120_000)
    return page


def tab_titles(page) -> list[str]:
    return page.locator(NAV_LINKS).all_inner_texts()


def show(page, title: str) -> None:
    """Open a tab and wait until its charts are drawn (the count of drawn charts on screen holds still for four polls)
    and no event is at work."""
    go_to(page, title)
    expect(current_lesson(page)).to_have_text(title)
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


def test_every_tab_meets_wcag_aa_contrast_as_it_opens_and_at_800_px_is_reachable_with_no_chart_titles_overlapping(
    browser, app_url
):
    """One page: every tab opened at 1280x720 and checked for contrast, then the window narrowed to 800 px and every
    tab opened again, its own button visible (none behind a menu), no chart text over another or over a plot area."""
    page = open_app(browser, app_url, 1280)
    page.click("#step-prefill")  # the step tab with its chart, chips and panels drawn
    page.wait_for_selector("#step-dist .lc-bar", timeout=120_000)
    titles, problems = tab_titles(page), {}
    for title in titles:
        show(page, title)
        problems[title] = contrast_problems(page)
    page.set_viewport_size({"width": 800, "height": 720})
    assert tab_titles(page) == titles, "every tab has its own button, none behind a menu"
    assert not page.get_by_role("button", name="More tabs").is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    overlaps = {}
    for k, title in enumerate(titles):
        assert page.locator("#lab-nav").get_by_role("link", name=title, exact=True).is_visible()
        show(page, title)
        relaid(page)
        overlaps[title] = texts_over_texts(page) + texts_over_plots(page) + slider_ends_cut(page)
        page.screenshot(path=str(ARTIFACTS / f"e2e-800px-tab{k + 1}.png"))
    page.close()
    assert problems == {title: [] for title in titles}
    assert overlaps == {title: [] for title in titles}


# every lesson: after its main action (tests/helpers/actions.py) its main control and the first chart it draws share
# the 1280x720 screen, scrolled to the control, with "Try this" open or closed, in projector mode too
LESSONS = [spec for spec in specs() if spec.chart]

# the chart holds data (an empty figure, a message in place of its data, has an empty plot area too)
DRAWN = (
    "chart => document.querySelector(`${chart} .lc-bar`) !== null"
    " || ((document.querySelector(`${chart} .js-plotly-plot`) || {}).data || []).length > 0"
)


def acted(browser, app_url: str, tab: TabSpec, viewport: dict):
    """A fresh page on the tab in normal mode, its main action done and its first chart drawn."""
    page = new_page(browser, viewport)
    page.goto(f"{app_url}?tab={tab.id}&projector=0")
    page.locator(tab.main).wait_for()
    idle(page)
    act(page, tab)
    until(page, lambda: page.evaluate(DRAWN, tab.chart), 300, f"{tab.chart} to draw its data")
    idle(page)
    return page


def projector(page, on: bool) -> None:
    """Switch projector mode with its checkbox, as a teacher does in the middle of a lesson, and wait until the
    charts have been laid out again at the new size."""
    box = page.locator("#projector input")
    box.check() if on else box.uncheck()
    page.wait_for_function("on => document.body.classList.contains('projector') === on", arg=on)
    relaid(page)


# the width of every chart drawn on screen, unchanged for four polls in a row: a resize (the window's, or projector
# mode's zoom) has been followed by the charts
RELAID = """
() => {
  const w = [...document.querySelectorAll('.js-plotly-plot .main-svg')].filter(e => e.getClientRects().length)
    .map(e => Math.round(e.getBoundingClientRect().width)).join();
  window.__widths = (window.__widths || []).concat(w).slice(-4);
  return window.__widths.length === 4 && window.__widths.every(x => x === w);
}
"""


def relaid(page) -> None:
    page.evaluate("window.__widths = []")
    page.wait_for_function(RELAID, polling=250, timeout=60_000)
    idle(page)


def fits(page, tab: TabSpec, name: str) -> dict:
    """The lesson's control and first chart on one 1280x720 screen, as the page is ("Try this" closed, as every tab
    opens) and with "Try this" opened by its label (then closed again); a screenshot of each."""
    shown = {"as it is": shares_the_screen(page, tab.main, tab.chart)}
    page.screenshot(path=str(ARTIFACTS / f"e2e-720p-{tab.id}{name}.png"))
    if tab.try_this:
        toggle = page.locator(tab.try_this).get_by_text(re.compile(r"^Try this \("))
        toggle.click()
        idle(page)
        shown["Try this toggled"] = shares_the_screen(page, tab.main, tab.chart)
        toggle.click()
        idle(page)
    return shown


@pytest.mark.parametrize("tab", LESSONS, ids=lambda tab: tab.id)
def test_after_its_main_action_a_lesson_fits_1280x720_in_both_modes_and_is_drawn_whole_at_800_px(browser, app_url, tab):
    """One visit per lesson: its main action done once, then the page read at 1280x720 (normal, then projector mode
    switched on as a teacher does), then at 800 px (a student's narrow window): the control and its first chart share
    the screen, and no chart text is cut at the chart's edge or drawn over another text or a plot area, and no
    slider's end is cut off. Then, back at 1280x720 with every accordion open, the first use of each glossary term on
    the tab is marked."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = acted(browser, app_url, tab, PROJECTOR)
    shown, drawn_whole = {}, {}
    shown["normal"], drawn_whole["normal"] = fits(page, tab, ""), not_drawn_whole(page)
    projector(page, True)
    shown["projector"], drawn_whole["projector"] = fits(page, tab, "-projector"), not_drawn_whole(page)
    projector(page, False)
    page.set_viewport_size({"width": 800, "height": 720})
    relaid(page)
    drawn_whole["800 px"] = not_drawn_whole(page)
    page.screenshot(path=str(ARTIFACTS / f"e2e-800px-{tab.id}-after.png"), full_page=True)
    page.set_viewport_size(PROJECTOR)
    relaid(page)
    open_accordions(page)
    unmarked = unmarked_on_the_tab(page, f"{tab.id}, after its main action, every accordion open")
    if tab.stop:
        page.click(tab.stop)  # what it left running (a simulated class) would load the machine for minutes
    page.close()
    assert {mode: [k for k, where in checks.items() if not where["fits"]] for mode, checks in shown.items()} == {
        "normal": [],
        "projector": [],
    }, shown
    assert drawn_whole == {"normal": [], "projector": [], "800 px": []}
    assert unmarked == [], "\n".join(unmarked)


def test_projector_mode_keeps_the_whole_navigation_in_view_and_outlives_a_reload(browser, app_url):
    page = new_page(browser, PROJECTOR)
    page.goto(f"{app_url}?tab=step")
    page.locator("#step-prefill").wait_for()
    page.locator("#projector input").check()
    page.wait_for_function("document.body.classList.contains('projector')")
    links = [link.bounding_box() for link in page.locator(NAV_LINKS).all()]
    assert len(links) == len(specs()) and all(b["x"] >= 0 and b["x"] + b["width"] <= 1280 for b in links), links
    assert len({round(b["height"]) for b in links}) == 1, "no title wraps inside its link"
    page.reload()
    page.locator("#step-prefill").wait_for()
    assert page.evaluate("document.documentElement.classList.contains('projector')")
    expect(page.locator("#projector input")).to_be_checked()
    page.goto(f"{app_url}?tab=step&projector=0")  # a link's choice wins over the stored one
    page.locator("#step-prefill").wait_for()
    assert not page.evaluate("document.documentElement.classList.contains('projector')")
    page.close()
