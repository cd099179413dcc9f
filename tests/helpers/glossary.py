"""Reading a tab's prose for the glossary, as a student meets it: the FIRST visible use of each glossary term (found
as visuals.glossary.word finds it: its key as a whole word, a plural "s" and a capital first letter allowed; the
EVERYDAY words left out) must be marked, inside a `button.lab-term` whose title is that term's explanation.

What is read is the open tab's prose: its visible text outside the controls (a label or a hint of a control cannot
hold a marked term), buttons, charts and code. Later uses of a term may be plain words. The glossary test reads every
tab as it opens and with its accordions open; the layout test reads each lesson after its main action."""

from tests.helpers.pages import idle
from visuals.glossary import EVERYDAY, TERMS, word

# the visible text of the open tab in document order, as [text, hover text of the marked term it is inside or null];
# a " " between two pieces of text in different blocks, so words of two paragraphs do not run together
PROSE = """
() => {
  const panel = [...document.querySelectorAll('.lab-page')].find(p => p.getClientRects().length);
  // a chart's text (plotly's, or an HTML chart's: visuals.chart) names its parts, the page's prose explains them
  const skip = '.form, button:not(.lab-term), input, textarea, select, label, svg, .js-plotly-plot, .lc, code, pre, '
    + '.cm-editor, style, script, [role=listbox]';
  const block = e => { while (e && getComputedStyle(e).display.startsWith('inline')) e = e.parentElement; return e; };
  const walker = document.createTreeWalker(panel, NodeFilter.SHOW_TEXT);
  const pieces = [];
  let last = null;
  for (let n; (n = walker.nextNode()); ) {
    const e = n.parentElement;
    if (e.closest(skip) || !e.getClientRects().length) continue;
    // a space alone between two inline elements is a space on screen ("a Q8_0 LM head": two marked terms)
    if (!n.textContent.trim()) {
      if (last && getComputedStyle(e).whiteSpace !== 'pre') pieces.push([' ', null]);
      continue;
    }
    if (last && block(e) !== last) pieces.push([' ', null]);
    last = block(e);
    const marked = e.closest('button.lab-term');
    pieces.push([n.textContent, marked ? marked.title : null]);
  }
  return pieces;
}
"""

# every accordion on the open tab that is closed (opened one at a time: one may hold another)
CLOSED = """
() => [...document.querySelectorAll('.lab-page .label-wrap:not(.open)')]
  .filter(b => b.getClientRects().length).length
"""
# opens the first of them, and marks it so that the wait below knows which one it is
OPEN_ONE = """
() => {
  const b = [...document.querySelectorAll('.lab-page .label-wrap:not(.open)')]
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


def unmarked_on_the_tab(page, where: str) -> list[str]:
    """`unmarked_first_uses` of the open tab's prose as the page shows it now."""
    return unmarked_first_uses(page.evaluate(PROSE), where)


def open_accordions(page) -> None:
    """Open every accordion on the open tab, one at a time, each drawn before the next, and wait for the events their
    opening started (a panel that reads the model as it opens)."""
    for _ in range(20):
        if not page.evaluate(CLOSED):
            break
        page.evaluate(OPEN_ONE)
        page.wait_for_function(OPENED)
    idle(page)
