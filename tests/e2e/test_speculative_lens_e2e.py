"""The speculative tab's early-exit draft beside the logit lens, performed in headless Chromium on the bundled model:
each round shows the lens row at L next to the final layer's, and the run its first guesses kept beside the lens's
agreement at L, equal in greedy rounds."""

import re

import pytest

from tests.helpers.pages import ARTIFACTS, idle, pick, until
from ui.speculative.tab import SPEC

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
RUN_S = 300


TAB = (SPEC.title, "#speculative-buttons")  # the module's page (tests/e2e/conftest.py)


def test_early_exit_rounds_show_the_lens_at_l_and_the_run_its_agreement(page):
    pick(page, "speculative-preset", "Early exit: cheap, mostly wrong")
    idle(page)
    page.click("#speculative-prefill")
    idle(page)
    page.click("#speculative-round")
    table = until(
        page, lambda: page.locator("#speculative-exit-lens tr").count() == 2, 120, "the lens rows of the round"
    )
    assert table
    rows = page.locator("#speculative-exit-lens th").all_inner_texts()
    assert re.match(r"layer \d+ \(the draft: the lens at L\)", rows[0]) and rows[1] == "layer 30 (final)"
    assert page.locator("#speculative-exit-lens td.final").count() >= 1  # the target's choice, outlined
    page.locator("#speculative-exit-lens").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "speculative-exit-lens.png"))
    page.click("#speculative-end")
    until(
        page, lambda: "Plain decoding" in page.locator("#speculative-speed").inner_text(), RUN_S, "the run to its end"
    )
    idle(page, RUN_S)
    line = page.locator("#speculative-exit-agree").inner_text()
    kept, of = re.search(r"First guesses kept: (\d+) of (\d+)", line).groups()
    agreed, of_too = re.search(r"picked the final token: (\d+) of (\d+)", line).groups()
    assert kept == agreed and of == of_too and "one event" in line
