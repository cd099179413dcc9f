"""One glossary for the whole app, read the way a student meets it: every tab, opened from the tab bar in headless
Chromium at 1280x720, is read three times (as it opens, with every accordion on it opened, and after its main action
where that takes under a couple of minutes on the bundled model), and in each reading the FIRST visible use of each
glossary term (found as visuals.glossary.word finds it: its key as a whole word, a plural "s" and a capital first
letter allowed; the EVERYDAY words left out) must be marked: inside an `abbr.lab-term` whose hover text is that
term's explanation.

What is read is the tab's prose: its visible text outside the controls (a label or a hint of a control cannot hold a
marked term), buttons, charts and code. Later uses of a term may be plain words."""

import pytest

from app import TABS
from tests.helpers.pages import idle, new_page, until
from visuals.glossary import EVERYDAY, TERMS, word

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

MEASURE_S = 400  # the timing tab's quick plan takes about a minute alone on two cores

# the visible text of the open tab in document order, as [text, hover text of the marked term it is inside or null];
# a " " between two pieces of text in different blocks, so words of two paragraphs do not run together
PROSE = """
() => {
  const panel = [...document.querySelectorAll('#lab-tabs [role=tabpanel]')].find(p => p.getClientRects().length);
  const skip = '.form, button, input, textarea, select, label, svg, .js-plotly-plot, code, pre, .cm-editor, style, '
    + 'script, [role=listbox]';
  const block = e => { while (e && getComputedStyle(e).display.startsWith('inline')) e = e.parentElement; return e; };
  const walker = document.createTreeWalker(panel, NodeFilter.SHOW_TEXT);
  const pieces = [];
  let last = null;
  for (let n; (n = walker.nextNode()); ) {
    const e = n.parentElement;
    if (!n.textContent.trim() || e.closest(skip) || !e.getClientRects().length) continue;
    if (last && block(e) !== last) pieces.push([' ', null]);
    last = block(e);
    const marked = e.closest('abbr.lab-term');
    pieces.push([n.textContent, marked ? marked.title : null]);
  }
  return pieces;
}
"""

# every accordion on the open tab that is closed (opened one at a time: one may hold another)
CLOSED = """
() => [...document.querySelectorAll('#lab-tabs [role=tabpanel] .label-wrap:not(.open)')]
  .filter(b => b.getClientRects().length).length
"""
# opens the first of them, and marks it so that the wait below knows which one it is
OPEN_ONE = """
() => {
  const b = [...document.querySelectorAll('#lab-tabs [role=tabpanel] .label-wrap:not(.open)')]
    .find(b => b.getClientRects().length);
  b.dataset.opening = '';
  b.click();
}
"""
# the accordion just clicked is open, its content drawn below its label
OPENED = """
() => {
  const b = document.querySelector('[data-opening]');
  const done = b.classList.contains('open') && b.nextElementSibling && b.nextElementSibling.getClientRects().length;
  if (done) delete b.dataset.opening;
  return done;
}
"""

# each tab's main action: the buttons pressed in turn, each once the events before it have ended. Left out: serving
# (its students keep stepping until stopped) and batching (several minutes of batches on a CPU)
ACTIONS = {
    "step": ["#step-prefill", "#step-step"],
    "timing": ["#timing-measure"],
    "beams": ["#beams-step"],
    "speculative": ["#speculative-prefill", "#speculative-round"],
    "constrained": ["#constrained-step"],
    "quantization": ["#quantization-step"],
}


# a term's use counts as marked inside its own explanation's abbr, or one whose term contains it ("eos" shown for
# "stopped: eos")
MARKED_BY = {name: {TERMS[other] for other in TERMS if name in other} for name in TERMS}
SCANNED = {name: word(name) for name in TERMS if name not in EVERYDAY}


def unmarked_first_uses(pieces: list[list], where: str) -> list[str]:
    """Each scanned term whose first use in `pieces` (PROSE's reading) is not marked, with the words around it."""
    text = "".join(t for t, _ in pieces)
    marks = [m for t, m in pieces for _ in t]
    out = []
    for name, pattern in SCANNED.items():
        found = pattern.search(text)
        if found and not {marks[found.start()], marks[found.end() - 1]} <= MARKED_BY[name]:
            around = text[max(0, found.start() - 60) : found.end() + 60].replace("\n", " ")
            out.append(f"{where}: the first {name!r} is not marked: ...{around}...")
    return out


def open_tab(page, title: str) -> None:
    page.get_by_role("tab", name=title, exact=True).click()
    page.wait_for_function(
        "t => [...document.querySelectorAll('[role=tab]')].some(b => b.textContent === t && "
        "b.getAttribute('aria-selected') === 'true')",
        arg=title,
    )
    page.locator(".lab-lesson >> visible=true").first.wait_for()
    idle(page)


def open_accordions(page) -> None:
    for _ in range(20):
        if not page.evaluate(CLOSED):
            return
        page.evaluate(OPEN_ONE)
        page.wait_for_function(OPENED)
    idle(page)


def act(page, tab_id: str) -> None:
    if tab_id == "step":  # Prefill reads the prompt once the chat template has been applied to it
        until(page, lambda: page.locator("#step-templated textarea").input_value(), 180, "the templated prompt")
    for button in ACTIONS[tab_id]:
        page.locator(button).click()
        page.wait_for_timeout(500)
        idle(page, MEASURE_S)


def test_every_tab_marks_the_first_use_of_each_glossary_term(browser, app_url):
    page = new_page(browser)
    page.goto(f"{app_url}?projector=0")
    page.locator("#start-plans a").first.wait_for(timeout=120_000)
    idle(page)
    problems = []
    for title, _, tab_id in TABS:
        open_tab(page, title)
        problems += unmarked_first_uses(page.evaluate(PROSE), f"{tab_id}, as it opens")
        open_accordions(page)
        problems += unmarked_first_uses(page.evaluate(PROSE), f"{tab_id}, every accordion open")
        if tab_id in ACTIONS:
            act(page, tab_id)
            problems += unmarked_first_uses(page.evaluate(PROSE), f"{tab_id}, after {' then '.join(ACTIONS[tab_id])}")
    page.close()
    assert problems == [], "\n".join(problems)


# the first marked term below the window, put on the window's last line and given the focus as Tab gives it: how far
# its bottom is from the window's, before and after
FOCUS_ON_THE_LAST_LINE = """
() => {
  const t = [...document.querySelectorAll('abbr.lab-term')].find(t => t.getBoundingClientRect().top > innerHeight);
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
