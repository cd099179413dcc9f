"""Stop during a long Prefill stops it: a 3,000-token prompt's Prefill, stopped once the server is reading it, ends
within a second of the press reaching the server (the page says how soon, as the server measured it: a loaded
machine's delay in the browser is not the server's), and nothing of it lands (no run: Step asks for a Prefill).
While it reads, the page says how far ("reading the prompt: 512 of 3,004 tokens")."""

import re
import time

import pytest
from gradio_client import Client
from playwright.sync_api import expect

from tests.helpers.pages import ARTIFACTS, idle

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

LONG = "the cat sat on the mat. " * 429  # 3,003 tokens of the bundled model's tokenizer (10,296 characters)


def ticks(client: Client) -> int:
    """The scheduler's passes over the last minute (its prompt chunks among them)."""
    return client.predict(api_name="/traffic").get("ticks") or 0


def test_stop_during_a_3000_token_prefill_says_stopped_within_a_second_and_nothing_lands(step_page, app_url):
    page, server = step_page, Client(app_url, verbose=False, analytics_enabled=False)
    prompt = page.locator("#step-prompt textarea")
    prompt.fill(LONG)
    prompt.blur()
    idle(page)  # what the model will read, redrawn
    before = ticks(server)
    page.click("#step-prefill")
    deadline = time.monotonic() + 120
    while ticks(server) <= before and time.monotonic() < deadline:  # the server has read its first chunk
        time.sleep(0.05)
    assert ticks(server) > before, "the Prefill never reached the scheduler"
    # while it reads: the stage says so over the old view, which is dimmed, as are the panels and the message
    status = page.locator("#step-stage [data-testid=status-tracker].full:not(.hide)")
    assert "reading the prompt" in status.evaluate("e => getComputedStyle(e, '::before').content")
    # and how far: the page asks the server while it waits (ui/step/reading.py)
    far = re.compile(r"reading the prompt: ([\d,]+) of 3,00\d tokens")
    expect(status).to_have_attribute("data-reading", far, timeout=30_000)
    first = int(far.search(status.get_attribute("data-reading")).group(1).replace(",", ""))
    assert 0 < first < 3000
    assert far.search(status.evaluate("e => getComputedStyle(e, '::before').content"))
    for old in ("#step-stage .patched", "#step-message", "#step-below"):
        assert float(page.locator(old).evaluate("e => getComputedStyle(e).opacity")) < 0.5, f"{old} not marked"
    page.screenshot(path=str(ARTIFACTS / "step-prefill-reading.png"))
    pressed = time.monotonic()
    page.click("#step-stop-button")
    expect(page.locator("#step-message")).to_contain_text("Prefill stopped after", timeout=30_000)
    seen_s = time.monotonic() - pressed  # the browser's view of it: its own scheduling delay included
    said = page.locator("#step-message").inner_text()
    # the server's own time, from the press reaching it to the Prefill's end: a loaded machine delays the browser
    took = float(re.search(r"([\d.]+) s after you pressed Stop", said).group(1))
    assert took < 1.0, f"the Prefill ended {took:.2f} s after Stop reached the server: {said}"
    assert "of 3,0" in said and "nothing of it was kept" in said
    print(f"Prefill stopped: server {took:.2f} s, page {seen_s:.2f} s after the press")
    idle(page)
    page.click("#step-step")  # nothing landed: no run to step
    expect(page.locator("#step-message")).to_contain_text(re.compile("press Prefill", re.I), timeout=30_000)
