"""One rule for a bad value, on every lesson (ui/validate.py), in headless Chromium on the bundled model: every
slider's number box of each lesson (its first screen and its "More settings") is sent a value below its range, one
above it and an empty box; each time a message beside the slider (inside its block) names the value and the range,
and the box shows the value in effect (the end of the range, or for an emptied box the value it had), which the
lesson's handlers answer (no message of theirs about the value typed stays beside it). On Step by step,
a handler's message (top-k 2.5) sits beside the box it names, not in the line under the buttons, and Step before any
Prefill says "Press Prefill first"."""

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import PROJECTOR, idle, new_page, until
from ui.tabs import specs

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

# each slider drawn on the page: its number box's label, range and value, and its block's id (given one if it has
# none, so the test can find it again)
SLIDERS = """() => [...document.querySelectorAll('input[type=number]')]
  .filter(b => b.getClientRects().length && b.closest('div.block').querySelector('input[type=range]'))
  .map((b, i) => {
    const block = b.closest('div.block');
    if (!block.id) block.id = `lab-test-slider-${i}`;
    return {id: block.id, label: b.getAttribute('aria-label').replace('number input for ', ''), lo: b.min, hi: b.max,
            value: b.value};
  })"""


def said_beside(page, block_id: str) -> str:
    return "\n".join(page.locator(f"#{block_id} > .lab-beside").all_inner_texts())


def typed(page, block_id: str, value: str) -> None:
    box = page.locator(f"#{block_id} input[type=number]")
    box.fill(value)
    box.press("Tab")  # the box loses the focus, as a person moving on does


def typed_until(page, block_id: str, value: str, check) -> bool:
    """Type `value` and wait for `check()`; once more if it has not come in 10 s: a page still settling (its setup's
    answer redrew the slider), or a handler's note for the value before, answered late on a loaded machine."""
    for wait_s in (10, 20):
        typed(page, block_id, value)
        try:
            until(page, check, wait_s, "the note")
            return True
        except AssertionError:
            pass
    return False


def slider_problems(page, lesson: str) -> list[str]:
    problems = []
    more = page.locator(f"#{lesson}-more .label-wrap")
    if more.count() and "open" not in (more.first.get_attribute("class") or ""):
        more.first.click()  # every slider of the lesson, "More settings" included
        page.locator(f"#{lesson}-more .label-wrap.open").first.wait_for()
        # gradio draws a closed panel's controls once it opens, a moment after its header says open (the class
        # round's "more" is a row of panels that tell, not a panel of settings)
        if page.locator(f"#{lesson}-more.gr-accordion").count():
            drawn = f"#{lesson}-more.gr-accordion > [data-testid=accordion-content] input >> visible=true"
            page.locator(drawn).first.wait_for(timeout=30_000)
    sliders = page.evaluate(SLIDERS)
    if lesson not in ("start", "timing", "serving", "quantization") and not sliders:
        problems.append(f"{lesson}: no slider, its panels open")
    for s in sliders:
        lo, hi, box = float(s["lo"]), float(s["hi"]), f"#{s['id']} input[type=number]"
        below, above = f"{lo - 1:g}", f"{hi * 10 + 7:g}"
        for value, words, shown in (
            (below, f"{below} is below its smallest value", s["lo"]),
            (above, f"{above} is above its largest value", s["hi"]),
            # emptied after the value above: the box gets back the value in effect then, its largest
            ("", f"an empty box is not a number from {lo:g} to {hi:g}: kept", s["hi"]),
        ):
            if not typed_until(page, s["id"], value, lambda b=s["id"], w=words: w in said_beside(page, b)):
                problems.append(f"{lesson} {s['label']} sent {value!r}: beside it {said_beside(page, s['id'])!r}")
                continue
            # and the lesson's handlers answer the value in effect, not the one typed: no message of theirs stays
            theirs = f"#{s['id']} > .lab-beside:not([data-from=slider])"
            try:
                until(page, lambda t=theirs: not page.locator(t).count(), 20, "the handlers' messages gone")
            except AssertionError:
                problems.append(f"{lesson} {s['label']} sent {value!r}: still beside it {said_beside(page, s['id'])!r}")
            said = said_beside(page, s["id"])
            if s["label"] not in said or f"{float(shown):g}" not in said.replace(",", ""):
                problems.append(f"{lesson} {s['label']}: {said!r} names neither the control nor the value set")
            if float(page.locator(box).input_value()) != float(shown):
                problems.append(f"{lesson} {s['label']}: the box shows {page.locator(box).input_value()}, not {shown}")
        # back as it was: the slider's note goes as the box is typed in, and a handler's as the server answers
        if not typed_until(page, s["id"], s["value"], lambda b=s["id"]: not said_beside(page, b)):
            problems.append(f"{lesson} {s['label']} back at {s['value']}: still {said_beside(page, s['id'])!r}")
    return problems


def test_every_lessons_sliders_say_a_value_out_of_range_beside_themselves_and_show_the_value_in_effect(
    browser, app_url
):
    page = new_page(browser, PROJECTOR)
    problems = []
    for spec in specs():
        page.goto(f"{app_url}?tab={spec.id}&projector=0")
        page.locator(f"{spec.main} >> visible=true").first.wait_for(timeout=120_000)
        idle(page)
        problems += slider_problems(page, spec.id)
    page.close()
    assert problems == [], "\n".join(problems)


def test_step_says_a_handlers_message_beside_the_box_it_names_and_press_prefill_first(browser, app_url):
    page = new_page(browser, PROJECTOR)
    page.goto(f"{app_url}?tab=step&projector=0")
    page.locator("#step-step").wait_for(timeout=120_000)
    idle(page)
    page.click("#step-step")  # before any Prefill
    expect(page.locator("#step-message .lab-error")).to_contain_text("Press Prefill first", timeout=60_000)
    expect(page.locator("#step-message")).to_be_visible()  # it names no control: it stays in the line
    page.click("#step-prefill")
    idle(page)
    box = page.get_by_label("number input for Top-k")
    box.fill("2.5")  # in range, not a whole number: the handler refuses it
    box.press("Tab")
    beside = page.locator("div.block:has(> .lab-beside) >> text=Top-k must be a whole number")
    expect(beside.first).to_be_visible(timeout=60_000)
    top_k = box.locator("xpath=ancestor::div[contains(@class, 'block')][1]")
    assert "Top-k must be a whole number in [0, 200]" in top_k.locator(".lab-beside").inner_text()
    assert "got 2.5" in top_k.locator(".lab-beside").inner_text()
    expect(page.locator("#step-message")).to_be_hidden()  # said once, beside the box
    box.fill("40")
    box.press("Tab")
    until(page, lambda: top_k.locator(".lab-beside").count() == 0, 60, "the message gone after a good value")
    page.close()
