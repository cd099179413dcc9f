"""The Step tab opened with no link asks the server for nothing: the page starts with the default preset and what
the model reads for it (ui/opened.py, link_only). With a link, its setup runs as the tab opens."""

import pytest
from playwright.sync_api import expect

from bench.page_calls import is_event_post
from tests.helpers.pages import go_to, idle, new_page
from tests.helpers.step import more_settings

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


def opened(browser, url: str):
    """The Step lesson's page, settled, and the gradio events it sent: opened from Start here's navigation when `url`
    is the app's root, else by the link `url`."""
    page = new_page(browser)
    events = []
    page.on("request", lambda r: events.append(r.url) if is_event_post(r.url) else None)
    page.goto(url)
    if "?" not in url:
        go_to(page, "Step by step")
    page.locator("#step-prefill").wait_for()
    idle(page)
    more_settings(page)  # what the model reads is there, drawn once it opens (opening asks the server nothing)
    return page, events


def test_with_no_link_the_step_tab_opens_with_no_event(browser, app_url):
    page, events = opened(browser, app_url)
    expect(page.locator("#step-prompt-chips")).to_contain_text("capital")  # what the model reads, from the start
    expect(page.locator("#step-why")).to_contain_text("Penalties off")
    page.close()
    assert events == []


def test_a_links_setup_runs_as_the_step_tab_opens(browser, app_url):
    page, events = opened(browser, f"{app_url}?tab=step&preset=greedy-loop&top_k=40")
    # the link's preset (its own prompt, read by the model) and its top-k, set by the setup's one event
    expect(page.locator("#step-prompt-chips")).not_to_contain_text("capital")
    expect(page.get_by_label("number input for Top-k")).to_have_value("40")
    page.close()
    assert len(events) == 1
