"""Every tab's first screen, in headless Chromium at 1280x720 (a projector's size): opened from the tab bar and scrolled
to the top, with no scrolling, it shows the one line the tab teaches (`.lab-lesson`) and the tab's main button, in
normal mode and again with projector mode switched on; and every "Try this" is closed when the page loads (ui.lesson).
A screenshot of each first screen in each mode goes to artifacts/."""

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import ARTIFACTS, PROJECTOR, current_lesson, go_to, idle, new_page
from ui.tabs import TabSpec, specs

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

# the box of the first visible element matching each selector, as [top, bottom, left, right], and the viewport's size
WHERE = """
([lesson, main]) => {
  const box = sel => {
    const e = [...document.querySelectorAll(sel)].find(e => e.getClientRects().length);
    if (!e) return null;
    const b = e.getBoundingClientRect();
    return [b.top, b.bottom, b.left, b.right].map(Math.round);
  };
  const shown = [...document.querySelectorAll(lesson)].find(e => e.getClientRects().length);
  return {lesson: box(lesson), main: box(main), lessonText: shown ? shown.innerText : "",
          height: innerHeight, width: innerWidth};
}
"""

# every "Try this (...)" accordion drawn on the page (`shown`: only those on the open tab): its label and whether it
# is open
TRY_THIS = """
shown => [...document.querySelectorAll('.label-wrap')]
  .filter(b => /^Try this \\(/.test(b.innerText.trim()) && (!shown || b.getClientRects().length))
  .map(b => ({label: b.innerText.trim(), open: b.classList.contains('open')}))
"""


def inside(box, where) -> bool:
    return box is not None and box[0] >= 0 and box[1] <= where["height"] and box[2] >= 0 and box[3] <= where["width"]


def first_screen(page, tab: TabSpec) -> dict:
    """Open the tab by its button, scroll to the top; where its lesson line and main control (its spec's `main`: the
    speculative round's button, not Prefill's; Start here's first class plan's first link) are."""
    go_to(page, tab.title)
    expect(current_lesson(page)).to_have_text(tab.title)
    page.locator(".lab-lesson >> visible=true").first.wait_for()
    page.locator(f"{tab.main} >> visible=true").first.wait_for()
    idle(page)
    page.evaluate("scrollTo(0, 0)")
    page.wait_for_timeout(300)
    where = page.evaluate(WHERE, [".lab-lesson", tab.main])
    where["fits"] = inside(where["lesson"], where) and inside(where["main"], where)
    return where


def test_every_tab_opens_with_its_lesson_line_and_main_button_on_one_screen_in_both_modes(browser, app_url):
    ARTIFACTS.mkdir(exist_ok=True)
    page = new_page(browser, PROJECTOR)
    page.goto(f"{app_url}?projector=0")
    page.locator("#start-plans a").first.wait_for(timeout=120_000)
    idle(page)
    # on load, before any tab is opened: every "Try this" the page has drawn is closed
    on_load = page.evaluate(TRY_THIS, False)
    shown, tries = {}, {}
    for mode in ("normal", "projector"):
        if mode == "projector":
            page.locator("#projector input").check()
            page.wait_for_function("document.body.classList.contains('projector')")
        for tab in specs():
            where = first_screen(page, tab)
            shown[(tab.id, mode)] = where
            if mode == "normal":  # as each tab first opens: its own "Try this", closed
                tries[tab.id] = page.evaluate(TRY_THIS, True)
            suffix = "" if mode == "normal" else "-projector"
            page.screenshot(path=str(ARTIFACTS / f"e2e-first-{tab.id}{suffix}.png"))
    page.close()
    assert {k: w for k, w in shown.items() if not w["fits"]} == {}
    assert all(re.search(r"\w", w["lessonText"]) for w in shown.values()), "each lesson line says something"
    # every lesson has one (the beams tab two: the repetition panel's too); Start here's guided path is its plans
    assert {t: len(found) for t, found in tries.items()} == {
        t: 0 if t == "start" else 2 if t == "beams" else 1 for t in tries
    }
    assert [t for t in on_load + [t for found in tries.values() for t in found] if t["open"]] == []


LAPTOP = {"width": 1366, "height": 768}
# the controls a person sees on the first screen, each counted once: a slider with its number box and ↺ is one, a
# radio or a checkbox is one each, a button, a box, a dropdown, a panel's title one each; a glossary term and a link
# inside a sentence are words, not controls. The page's own header (projector mode) and its navigation (the lessons'
# titles) are not the lesson's, nor plotly's toolbar (drawn on a chart's hover)
FIRST_SCREEN_CONTROLS = """() => {
  const seen = new Set(), out = [];
  const controls = 'button, input:not([type=hidden]), select, textarea, .label-wrap, [role=radio], [role=checkbox]';
  for (const e of document.querySelectorAll(controls)) {
    if (!e.getClientRects().length || getComputedStyle(e).visibility !== 'visible') continue;
    if (e.matches('.lab-term, .label-wrap *, [role=tab]') || e.closest('#app-header, footer, .lab-term, nav, .modebar'))
      continue;
    const r = e.getBoundingClientRect();
    if (r.bottom <= 0 || r.top >= innerHeight || r.right <= 0 || r.left >= innerWidth) continue;
    const block = e.closest('div.block');
    const slider = block && block.querySelector('input[type=range]')
      && !e.matches('input[type=radio], input[type=checkbox]');
    const key = slider ? block : e;
    if (seen.has(key)) continue;
    seen.add(key);
    const label = slider ? (block.querySelector('[data-testid=block-info]') || block).textContent
      : (e.innerText || e.value || e.ariaLabel || e.type || '');
    out.push(`${e.tagName.toLowerCase()} ${label.trim().slice(0, 24)}`);
  }
  return out;
}"""


# the sizes each lesson's first screen is photographed at (artifacts/first-<lesson>-<size>.png), besides 1366x768
SHOTS = {
    "1280x720": (PROJECTOR, 0),
    "1280x720-projector": (PROJECTOR, 1),
    "800px": ({"width": 800, "height": 720}, 0),
    "390x844": ({"width": 390, "height": 844}, 0),
}


def test_each_lessons_first_screen_at_1366x768_shows_at_most_12_controls(browser, app_url):
    """Counted on each lesson as its link opens it; then its first screen photographed at a projector's, a narrow
    laptop window's and a phone's size, its lesson line on screen in each."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = new_page(browser, LAPTOP)
    counted, unseen = {}, []
    for tab in specs():
        for size, (viewport, projector) in [("1366x768", (LAPTOP, 0)), *SHOTS.items()]:
            page.set_viewport_size(viewport)
            page.goto(f"{app_url}?tab={tab.id}&projector={projector}")
            page.locator(f"{tab.main} >> visible=true").first.wait_for(timeout=120_000)
            idle(page)
            page.evaluate("scrollTo(0, 0)")
            if size == "1366x768":
                counted[tab.id] = page.evaluate(FIRST_SCREEN_CONTROLS)
                continue
            page.screenshot(path=str(ARTIFACTS / f"first-{tab.id}-{size}.png"))
            where = page.evaluate(WHERE, [".lab-lesson", tab.main])
            if not inside(where["lesson"], where):
                unseen.append(f"{tab.id} at {size}: the lesson line at {where['lesson']}")
    page.close()
    over = {t: (len(c), c) for t, c in counted.items() if len(c) > 12}
    assert over == {}, "\n".join(f"{t}: {n} controls: {c}" for t, (n, c) in over.items())
    assert unseen == []
