"""Stop during Run to end stops it: while the run streams, the stop line says how far it is ("token 12 of at most
400") with a bar; Stop pressed then ends it within a second of reaching the server (the server measures it, from the
press reaching it to the run's end, and the page says it: a browser's own delay on a loaded machine is not the
server's), the page says "stopped by you", and no token lands after that (the step count, read once every event of
the page has ended, is the one the page showed with the message)."""

import re
import time

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import idle, set_number

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

# a prompt the bundled model answers at length (a count to 1000): greedy runs past 20 tokens without an end token
PROMPT = "Count from 1 to 1000, separated by commas."
MAX_NEW = 400
STOPPED = re.compile(r"stopped by you, ([\d.]+) s after you pressed Stop")


def steps_shown(page) -> int:
    """The step the page shows, from the loop's caption ("step 37: one forward pass ..."; 0 before the first)."""
    caption = page.locator("#step-loop .loop-caption").inner_text()
    found = re.match(r"step (\d+):", caption)
    return int(found.group(1)) if found else 0


def test_stop_during_run_to_end_says_stopped_within_a_second_and_nothing_lands(step_page):
    page = step_page
    prompt = page.locator("#step-prompt textarea")
    prompt.fill(PROMPT)
    prompt.blur()
    set_number(page, "step-temperature", "0")
    set_number(page, "step-max-new", str(MAX_NEW))
    idle(page)
    page.click("#step-prefill")
    expect(page.locator("#step-stop")).to_contain_text("waiting for you")
    idle(page)
    page.click("#step-run-end")
    # the progress, in the place the run's tokens appear: the stop line under the strip, words and a bar
    line = page.locator("#step-stop")
    expect(line).to_contain_text(re.compile(rf"running: token [2-9]\d of at most {MAX_NEW}"))
    assert page.locator("#step-stop progress.step-progress").is_visible()
    pressed = time.monotonic()
    page.click("#step-stop-button")
    expect(line).to_contain_text("stopped by you")
    seen_s = time.monotonic() - pressed  # the browser's view of it: its own scheduling delay included
    said, at_message = line.inner_text(), steps_shown(page)
    took = float(STOPPED.search(said).group(1))
    assert took < 1.0, f"the run ended {took:.2f} s after Stop reached the server: {said}"
    assert 20 <= at_message < MAX_NEW, said
    idle(page)  # every event of the page ended: the run's and Stop's
    assert steps_shown(page) == at_message, "a token landed after the page said stopped"
    assert STOPPED.search(line.inner_text()), "the stop line no longer says Stop ended the run"
    print(f"stopped: server {took:.2f} s, page {seen_s:.2f} s after the press, at step {at_message}")
