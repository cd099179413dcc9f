"""A class round's pages as the browser tests read them: the round view's text, a message, its chart and the tokens
drawn (tests/e2e/test_classround_e2e.py, test_hall_round_e2e.py)."""

import re

from playwright.sync_api import expect

from tests.helpers.charts import read_chart
from tests.helpers.pages import until

LAPTOP = {"width": 1280, "height": 800}


def view(page) -> str:
    return page.locator("#classround-view").inner_text()


def shows(page, pattern: str, what: str, timeout_s: float = 60) -> str:
    """Wait until the page's round view says `pattern` (a regex); return its text."""
    return until(page, lambda: re.search(pattern, view(page)) and view(page), timeout_s, what)


def press_hidden(page, selector: str) -> None:
    """What a student could do with the page's own script: click a control the page hides from them."""
    page.evaluate("s => document.querySelector(s).click()", selector)


def told(page, words: str) -> None:
    expect(page.locator("#classround-message")).to_contain_text(words)


def chart(page):
    """The round view's chart, read back as data (tests/helpers/charts.py)."""
    return read_chart(page.locator("#classround-view figure.lc").evaluate("e => e.outerHTML"))


def drawn_tokens(page) -> list[str]:
    return page.locator("#classround-view .classround-drawn .classround-tok").all_inner_texts()
