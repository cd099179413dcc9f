"""The Continuous batching tab's "Try this" steps, done through the page's controls in headless Chromium on the
bundled model (CPU): simulated students share forward passes, the page states the measured cost of a shared pass
beside the same students one after another (as the chart draws them; no speed is asserted), a Step on the Step by
step tab says who shared it, "Run my steps alone" gives the very next Step a pass of its own, a bad number of students
is refused in the app's words, and Stop them says what it stopped; a class on one prompt shares its KV blocks (drawn
with their hashes, and what they cost), and a chat prompt on Step by step says it took the template's blocks."""

import re

import pytest

from decoding.serving.students import PROMPTS
from tests.helpers.contrast import contrast_problems
from tests.helpers.pages import (
    ARTIFACTS,
    explained,
    figure,
    go_to,
    idle,
    pick,
    until,
)
from tests.helpers.step import more_settings
from ui.serving.tab import SPEC, TRY

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


TAB = (SPEC.title, None)  # the module's page (tests/e2e/conftest.py)


def leave(page) -> None:
    go_to(page, "Continuous batching")
    page.get_by_role("button", name="Stop them").click()


def pass_line(page) -> str:
    found = page.get_by_text(re.compile(r"computed (with \d+ other session|alone)"))
    return found.first.inner_text() if found.count() else ""


def test_the_continuous_batching_try_this_steps_do_what_they_say(page):
    # 1. open 8 simulated students: the charts go live, and passes hold several students. For 300 s, not the
    # default 120: on a loaded machine steps 1-2 can take minutes, and step 3 needs the class still stepping
    page.locator("#serving-seconds input").fill("300")
    # a student following the steps opens them, and the section that explains the terms they use (both start closed)
    for section, label in (("#serving-how", "How this server batches everyone's steps"), ("#serving-try", "Try this")):
        page.locator(section).get_by_text(label).first.click()
        until(page, lambda s=section: page.locator(f"{s} button.lab-term").first.is_visible(), 30, f"{section} open")
    page.get_by_role("button", name="Open simulated students").click()
    until(page, lambda: page.locator("#serving-live input").is_checked(), 30, "Live ticked")
    for name in ("tick", "chunked prefill", "no padding", "KV cache", "bit-exact with generate()"):
        explained(page, "body", name)  # each term of the lesson's text, explained on hover where it appears
    shared = lambda: max(
        next(t for t in figure(page, "serving-ticks")["data"] if t["name"] == "decoding one token")["y"]
    )
    until(page, lambda: shared() >= 2, 60, "a pass shared by two students or more")

    # 2. the line above the charts states the largest pass and the same students one after another, as drawn
    assert "each bar is the measured median time of one pass" in TRY
    until(page, lambda: said_as_drawn(page), 90, "the status to state the chart's numbers for the largest pass")
    # the roofline's note is the line under its title, above the plot: clear of the dashes, whatever they reach
    assert page.evaluate(ABOVE, ["#serving-cost .lc-sub", "#serving-cost .lc-plot"])
    noise = page.locator("#serving-status").inner_text()
    assert "differ from a solo pass by up to" in noise or "bit-identical to a solo pass" in noise
    if "differ" in noise:  # float32 on this CPU: a few 1e-5, explained where the number stands
        explained(page, "#serving-status", "batching noise")
    page.screenshot(path=str(ARTIFACTS / "e2e-serving.png"), full_page=True)
    # 3. on Step by step, a Step says how many other sessions shared its pass (press Step a few times)
    go_to(page, "Step by step")
    page.click("#step-prefill")
    page.wait_for_selector("#step-chips .tok.prompt", timeout=60_000)
    step_until(page, "other session", 5)
    assert re.search(r"computed with \d+ other sessions?: batch \d+", pass_line(page))
    # 4. Run my steps alone: from the next step on (the tick reaches the server beside the click), passes of its own
    more_settings(page)
    page.locator("#step-alone input").check()
    idle(page)  # the tick is its own event: the Step after it lands is the one that must run alone
    step_until(page, "computed alone, as you asked", 1)  # the very next Step
    assert "bit-exact with generate()" in pass_line(page)
    explained(page, "#step-orders", "bit-exact with generate()")
    page.locator("#step-alone input").uncheck()


# whether the first element's box ends above the second's top
ABOVE = """([a, b]) => {
  const [p, q] = [a, b].map(s => document.querySelector(s).getBoundingClientRect());
  return p.height > 0 && p.bottom <= q.top + 1;
}"""


def blocks(page, kind: str) -> list[str]:
    """The short hashes drawn on the blocks chart as `kind` ("copied from the pool (shared)", ...): each block's
    numbers are its start, then its hash."""
    drawn = figure(page, "serving-blocks") or {"data": []}
    return [c[1] for t in drawn["data"] if t.get("name") == kind for c in t.get("customdata") or []]


def test_the_prefix_cache_try_this_steps_show_the_blocks_the_server_shares(page):
    # 5. one prompt for the class: one student computes its blocks, every other copies the same hashes
    go_to(page, "Continuous batching")
    page.locator("#serving-students input").fill("4")
    pick(page, "serving-prompts", PROMPTS[2])
    page.get_by_role("button", name="Open simulated students").click()
    copied = lambda: blocks(page, "copied from the pool (shared)")
    until(page, lambda: len(copied()) >= 3 and len(set(copied())) < len(copied()), 120, "sessions sharing blocks")
    said = page.locator("#serving-prefix").inner_text()
    assert "prompt tokens not computed" in said and "without prefix caching" in said and "block table" in said
    for name in ("prefix cache", "KV block"):
        explained(page, "body", name)
    page.screenshot(path=str(ARTIFACTS / "e2e-serving-blocks.png"), full_page=True)
    # 6. their own questions in one chat template: the template's blocks are shared, each question computed
    pick(page, "serving-prompts", PROMPTS[1])
    page.get_by_role("button", name="Open simulated students").click()
    until(page, lambda: blocks(page, "computed by this session") and copied(), 120, "shared and own blocks together")
    # a chat prompt on Step by step starts with the same template: its first Step says where its prompt came from
    go_to(page, "Step by step")
    pick(page, "step-preset", "Open: tell me a story")
    idle(page)  # the preset's own events (a reset, the template applied) have ended before Prefill is pressed
    page.click("#step-prefill")
    page.wait_for_selector("#step-chips .tok.prompt")
    idle(page)  # a Step pressed while Prefill is at work would be dropped
    made = page.locator("#step-chips .tok.gen").count()
    page.click("#step-step")
    # the students' steps share the server's ticks with this one: on a loaded machine a tick takes seconds
    chips = page.locator("#step-chips .tok.gen")
    until(page, lambda: chips.count() == made + 1, 300, "the Step after Prefill")
    line = page.get_by_text(re.compile(r"server's prefix cache")).first.inner_text()
    assert "the start of your prompt came from" in line or "your whole prompt was in" in line
    if "the start" in line:
        assert "float noise" in line  # a partial hit is not bit-exact, and the page says so
    go_to(page, "Continuous batching")
    page.get_by_role("button", name="Stop them").click()


def ms(x: float) -> str:
    return f"{x:.0f}" if abs(x) >= 10 else f"{x:.1f}"  # as the page writes a time


def said_as_drawn(page) -> bool:
    """The status names the largest pass and a pass of one with the times the chart draws for them (both are read
    from one refresh: the live timer redraws every 2 s, so a pair read across two refreshes is tried again)."""
    line = next(t for t in figure(page, "serving-cost")["data"] if t["name"] == "one packed pass (median)")
    by_rows = {int(x): y for x, y in zip(line["x"], line["y"])}  # a column per pass size, named by it
    k = max(by_rows)
    if k < 2 or 1 not in by_rows:
        return False
    one, big = by_rows[1], by_rows[k]
    text = page.locator("#serving-status").inner_text()
    stated = f"One pass for {k} students took {ms(big)} ms; one after another they would have taken {k} × {ms(one)}"
    return stated in text and f"the shared pass took {big / (k * one):.0%} of that" in text


def test_a_bad_number_of_students_is_refused_in_the_apps_words_and_stop_says_what_it_stopped(page):
    go_to(page, "Continuous batching")
    box = page.locator("#serving-students input")
    box.fill("-5")
    page.get_by_role("button", name="Open simulated students").click()
    said = "Simulated students must be a whole number in [1, 32], got -5"
    until(page, lambda: said in page.locator("#serving-message").inner_text(), 60, "the refusal")
    assert box.input_value() == "-5"  # kept as typed, not silently made 1
    assert page.locator(".error").count() == 0  # no "Error" badge on an output: the message line says it
    box.fill("1")  # one student: the count and its words agree ("1 simulated student is", not "students are")
    page.get_by_role("button", name="Open simulated students").click()
    until(page, lambda: "1 simulated student is stepping" in page.locator("body").inner_text(), 30, "the class")
    page.get_by_role("button", name="Stop them").click()
    until(page, lambda: "Stopped 1 simulated student (" in page.locator("body").inner_text(), 30, "Stop's answer")
    # the numbers hold still while a teacher reads them out: the page says they are frozen at Stop, Live is off,
    # and the line stays word for word the same for three of Live's 2-second periods
    status = page.locator("#serving-status")
    until(page, lambda: "Frozen at Stop: the 60 s before it" in status.inner_text(), 30, "the frozen line")
    assert not page.locator("#serving-live input").is_checked()
    assert "each time the median of those 60 s" in status.inner_text() or "One pass for" not in status.inner_text()
    page.wait_for_function(HELD_STILL, arg=["#serving-status", 6000], polling=250, timeout=60_000)


# true once the element's text has been the same for `ms` of the page's own clock (polled: it returns false, and
# starts again, whenever the text changes)
HELD_STILL = """([selector, ms]) => {
  const text = document.querySelector(selector).innerText;
  if (window.__held === undefined || window.__held.text !== text) window.__held = {text, since: performance.now()};
  return performance.now() - window.__held.since >= ms;
}"""


def step_until(page, words: str, tries: int) -> None:
    """Press Step (each time waiting for its token) until the pass line has `words`, at most `tries` times."""
    for _ in range(tries):
        made = page.locator("#step-chips .tok.gen").count()
        page.click("#step-step")
        page.wait_for_function(
            f"document.querySelectorAll('#step-chips .tok.gen').length === {made + 1}", timeout=60_000
        )
        if words in pass_line(page):
            return
    raise AssertionError(f"{tries} steps and no pass line with {words!r}: {pass_line(page)!r}")


def test_the_continuous_batching_tab_text_and_charts_meet_wcag_aa_contrast(page):
    go_to(page, "Continuous batching")
    assert contrast_problems(page) == []
