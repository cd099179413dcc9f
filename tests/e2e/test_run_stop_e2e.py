"""Beam search's and speculative decoding's Run to end show how far they are, in the place their answer appears (a
bar over the tree, over the round), with the old answer's other parts dimmed; Stop beside them ends the run within a
second of the press reaching the server (the page says the server's own time: a loaded machine delays the browser,
not the server), the page says "Stopped by you", and nothing lands after it (read once every event has ended)."""

import re
import time

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import idle, open_tab, set_number
from tests.helpers.step import more_settings

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

STOPPED = re.compile(r"Stopped by you, ([\d.]+) s after you pressed Stop")
BAR = "[data-testid=status-tracker].full:not(.hide)"  # gradio's progress bar, while the run goes


def stopped_within_a_second(page, stop: str, said: str) -> tuple[float, str]:
    """Press `stop`; once `said` (a selector) says Stop ended the run, return the server's time to stop and the text."""
    pressed = time.monotonic()
    page.click(stop)
    expect(page.locator(said)).to_contain_text("Stopped by you")
    seen_s = time.monotonic() - pressed  # the browser's view of it: its own scheduling delay included
    text = page.locator(said).inner_text()
    took = float(STOPPED.search(text).group(1))
    assert took < 1.0, f"the run ended {took:.2f} s after Stop reached the server: {text}"
    print(f"{stop}: server {took:.2f} s, page {seen_s:.2f} s after the press")
    return took, text


def opacity(page, selector: str) -> float:
    return float(page.locator(selector).evaluate("e => getComputedStyle(e).opacity"))


def test_beam_search_run_to_end_shows_its_step_and_stop_ends_it(browser, app_url):
    page = open_tab(browser, app_url, "Beam search & repetition", "#beams-step")
    more_settings(page, "beams")
    set_number(page, "beams-max-new", "64")
    idle(page)
    page.click("#beams-step")  # an answer on screen: the status, which the run marks as the one before it
    expect(page.locator("#beams-status")).to_contain_text("Step 1")
    idle(page)
    page.click("#beams-end")
    expect(page.locator(f"#beams-tree {BAR}")).to_contain_text(re.compile(r"beam step (\d\d|[3-9]) of at most 64"))
    assert opacity(page, "#beams-status") < 0.5, "the old status is not marked while the run goes"
    _, said = stopped_within_a_second(page, "#beams-stop", "#beams-status")
    at_message = int(re.search(r"Step (\d+)", said).group(1))
    assert 3 <= at_message < 64 and "the search can go on" in said
    idle(page)
    assert int(re.search(r"Step (\d+)", page.locator("#beams-status").inner_text()).group(1)) == at_message
    assert opacity(page, "#beams-status") == 1.0
    page.close()


def test_speculative_run_to_end_shows_its_round_and_stop_ends_it(browser, app_url):
    page = open_tab(browser, app_url, "Speculative decoding", "#speculative-round")
    more_settings(page, "speculative")
    set_number(page, "speculative-max-new", "160")
    idle(page)
    page.click("#speculative-end")
    bar = page.locator(f"#speculative-round-view {BAR}")
    expect(bar).to_contain_text(re.compile(r"round (\d\d|[2-9]): \d+ of at most 160 tokens"))
    _, said = stopped_within_a_second(page, "#speculative-stop", "#speculative-text")
    made = int(re.search(r"\((\d+) of at most 160 tokens\)", said).group(1))
    assert 1 <= made < 160 and "press Round or Run to end to go on" in said
    idle(page)
    shown = page.locator("#speculative-text").inner_text()
    assert int(re.search(r"\((\d+) of at most 160 tokens\)", shown).group(1)) == made, "a token landed after Stop"
    assert STOPPED.search(shown)
    page.close()
