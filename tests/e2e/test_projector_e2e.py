"""Projector mode is legible from the back of a room: on the step tab at 1280x720, after a Prefill and a bad top-k,
each kind of text (the lesson's body text, the tab labels, a control's hint, the message line, a chart's text, a
control's label) is drawn at least 1.4 times as large as in normal mode, as the browser computes it."""

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import new_page
from ui.projector import TYPE

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
LONG = 180_000  # ms: the first Prefill may wait for the model to load

# each kind of text, by the first element of it on the step tab
TEXTS = {
    "body text": "#step-top .prose p",
    "lesson link": "#lab-nav nav a",
    "hint": "#step-temperature",  # the innermost element holding the hint's words (HINT)
    "message": ".lab-error.lab-beside",  # a bad value's message, beside its control (ui/validate.py)
    "chart text": "#step-dist .lc",
    "chart tick": "#step-dist .lc-tick, #step-dist .lc-x",
    "control label": "#step-temperature [data-testid=block-info]",
}

HINT = "0 = greedy"  # how the temperature's hint begins (ui/step/controls.py)
# the first drawn element a selector finds; for the hint, the innermost element inside it whose text is the hint's
SIZE = """([sel, hint]) => {
  const drawn = e => e.getClientRects().length;
  const e = hint
    ? [...document.querySelectorAll(`${sel} *`)].find(e => !e.children.length && e.textContent.trim().startsWith(hint))
    : [...document.querySelectorAll(sel)].find(drawn);
  return e ? parseFloat(getComputedStyle(e).fontSize) : null;
}"""


def sizes(page) -> dict[str, float | None]:
    return {name: page.evaluate(SIZE, [selector, HINT if name == "hint" else None]) for name, selector in TEXTS.items()}


def set_projector(page, on: bool) -> None:
    box = page.locator("#projector input")
    box.check() if on else box.uncheck()
    page.wait_for_function(f"document.documentElement.classList.contains('projector') === {str(on).lower()}")


def test_projector_mode_draws_every_kind_of_text_at_least_1_4_times_as_large(browser, app_url):
    page = new_page(browser, {"width": 1280, "height": 720})
    try:
        page.goto(f"{app_url}?tab=step&projector=0")
        page.locator("#step-prefill").wait_for(timeout=LONG)
        page.click("#step-prefill")
        page.locator("#step-dist .lc-bar").first.wait_for(timeout=LONG)
        box = page.get_by_label("number input for Top-k")  # a bad top-k: its message says so beside the box
        box.fill("2.5")
        box.press("Enter")
        expect(page.locator(".lab-error.lab-beside")).to_be_visible(timeout=LONG)
        normal = sizes(page)
        assert None not in normal.values(), normal  # each kind of text is on the page
        set_projector(page, True)
        projector = sizes(page)
        set_projector(page, False)
        assert sizes(page) == normal  # switched back, the page is as it was
        ratios = {name: round(projector[name] / normal[name], 3) for name in TEXTS}
        assert all(r >= TYPE - 0.005 for r in ratios.values()), (ratios, normal, projector)
    finally:
        page.close()
