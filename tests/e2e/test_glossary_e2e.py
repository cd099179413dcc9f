"""One glossary for the whole app, read the way a student meets it (tests/helpers/glossary.py): every tab, opened
from the tab bar in headless Chromium at 1280x720, is read as it opens and again with every accordion on it opened;
in each reading the first visible use of each glossary term must be marked with its explanation. The third reading,
after each lesson's main action, is made on the layout test's visit of that lesson (tests/e2e/test_layout_e2e.py),
which does the action once for both."""

import pytest
from playwright.sync_api import expect

from tests.helpers.glossary import open_accordions, unmarked_first_uses, unmarked_on_the_tab
from tests.helpers.pages import PROJECTOR, current_lesson, go_to, idle, new_page
from ui.tabs import specs
from visuals.glossary import TERMS, word

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


def open_tab(page, title: str) -> None:
    go_to(page, title)
    expect(current_lesson(page)).to_have_text(title)
    page.locator(".lab-lesson >> visible=true").first.wait_for()
    idle(page)


def test_every_tab_marks_the_first_use_of_each_glossary_term(browser, app_url):
    page = new_page(browser)
    page.goto(f"{app_url}?projector=0")
    page.locator("#start-plans a").first.wait_for(timeout=120_000)
    idle(page)
    problems = []
    for spec in specs():
        open_tab(page, spec.title)
        problems += unmarked_on_the_tab(page, f"{spec.id}, as it opens")
        open_accordions(page)
        problems += unmarked_on_the_tab(page, f"{spec.id}, every accordion open")
    page.close()
    assert problems == [], "\n".join(problems)


# the first marked term below the window, put on the window's last line and given the focus as Tab gives it: how far
# its bottom is from the window's, before and after
FOCUS_ON_THE_LAST_LINE = """
() => {
  const t = [...document.querySelectorAll('button.lab-term')].find(t => t.getBoundingClientRect().top > innerHeight);
  window.scrollBy(0, t.getBoundingClientRect().bottom - innerHeight + 2);
  const before = innerHeight - t.getBoundingClientRect().bottom;
  t.focus();
  return [before, innerHeight - t.getBoundingClientRect().bottom, parseFloat(getComputedStyle(t).fontSize)];
}"""


def test_a_term_focused_on_the_windows_last_line_moves_up_so_its_explanation_shows_whole(browser, app_url):
    page = new_page(browser)
    page.goto(f"{app_url}?tab=timing&projector=0")
    page.locator("#timing-measure").wait_for(timeout=120_000)
    idle(page)
    before, after, em = page.evaluate(FOCUS_ON_THE_LAST_LINE)
    page.close()
    # under it: the 1.7em gap and up to five lines of 14 px text (the longest explanation at 24em wide)
    assert before < 10 and after >= 1.7 * em + 5 * 14 * 1.35, (before, after)


def test_the_scan_finds_a_term_as_a_whole_word_and_knows_a_marked_use():
    assert word("logit").search("raw logits here") and not word("KL").search("KLD") and word("softmax").match("Softmax")
    assert not word("top-1").search("top-10") and word("eos").search("(eos)") and not word("Q4_1").search("m.Q4_1.gguf")
    marked = [["the ", None], ["eos", TERMS["stopped: eos"]], [" then eos", None]]
    assert unmarked_first_uses(marked, "here") == []
    assert unmarked_first_uses([["the eos", None]], "here") == ["here: the first 'eos' is not marked: ...the eos..."]


PHONE = {"width": 390, "height": 844}
# the i-th term drawn on the page: whether it is open, and what its explanation box shows and where (its ::after)
TERM_STATE = """
i => {
  const t = [...document.querySelectorAll('button.lab-term')].filter(t => t.getClientRects().length)[i];
  const box = getComputedStyle(t, '::after');
  return {open: t.getAttribute('aria-expanded') === 'true', shows: box.content, title: t.title, left: box.left,
          right: box.right, width: t.getBoundingClientRect().width};
}"""
# opens the first closed panel (accordion) drawn on the page; false when none is left
OPEN_A_PANEL = """
() => {
  const b = [...document.querySelectorAll('.label-wrap:not(.open)')].find(b => b.getClientRects().length);
  if (b) b.click();
  return !!b;
}"""
DRAWN = "() => [...document.querySelectorAll('button.lab-term')].filter(t => t.getClientRects().length).length"


def tap_and_key_problems(page, where: str) -> list[str]:
    """Every term drawn on the page, opened and closed by a click (a tap on a phone), then by Enter, then opened by
    Enter and closed by Escape: each open shows its explanation, each close hides it."""
    problems = []
    n = page.evaluate(DRAWN)
    for _ in range(20):  # a lesson whose first screen has no term: its terms are in its panels, opened one at a time
        if n or not page.evaluate(OPEN_A_PANEL):
            break
        idle(page)
        n = page.evaluate(DRAWN)
    if not n:
        return [f"{where}: no glossary term is drawn, every panel open"]
    narrow = page.viewport_size["width"] < 640
    for i in range(n):
        term = page.locator("button.lab-term >> visible=true").nth(i)
        seen = []
        for open_it, close_it in (("click", "click"), ("Enter", "Enter"), ("Enter", "Escape")):
            for action, want in ((open_it, True), (close_it, False)):
                if action == "click":
                    term.click()
                else:
                    term.focus()
                    page.keyboard.press(action)
                state = page.evaluate(TERM_STATE, i)
                shown = state["shows"] not in ("none", "normal", "")
                if state["open"] != want or shown != want or (want and state["title"] not in state["shows"]):
                    seen.append(f"{action} -> open={state['open']} shows={state['shows'][:40]!r}")
                # on a phone an open explanation spans the window less a margin, whatever the term's place
                if want and narrow and (state["left"], state["right"]) != ("8px", "8px"):
                    seen.append(f"{action} -> explanation at left {state['left']}, right {state['right']}")
        if seen:
            problems.append(f"{where}: term {i} ({state['title'][:30]}...): {'; '.join(seen)}")
    return problems


@pytest.mark.parametrize("viewport, projector", [(PHONE, 0), (PROJECTOR, 1)], ids=["phone", "projector"])
def test_every_term_opens_and_closes_by_click_tap_and_keyboard_on_a_phone_and_a_projector(
    browser, app_url, viewport, projector
):
    page = new_page(browser, viewport)
    problems = []
    for spec in specs():
        page.goto(f"{app_url}?tab={spec.id}&projector={projector}")
        page.locator(spec.main).first.wait_for(timeout=120_000)
        idle(page)
        problems += tap_and_key_problems(page, f"{spec.id} at {viewport['width']} px, projector={projector}")
    page.close()
    assert problems == [], "\n".join(problems)
