"""The Step tab's "Decode step" choice in the browser: static runs the next Prefill's one-token passes through a static
cache (captured as a CUDA graph only on a GPU), and the line under the chart says which step ran each token."""

import re

import pytest

from tests.helpers.pages import idle, new_page
from tests.helpers.step import more_settings

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

# the line under the chart that says how the shown distribution's pass ran
PASS_LINE = re.compile(r"computed (alone|with \d+ other session)|the static cache's step")


def test_the_static_decode_step_runs_from_the_next_prefill_and_the_step_line_names_it(browser, app_url):
    page = new_page(browser, {"width": 1280, "height": 720})
    page.goto(f"{app_url}?tab=step&projector=0")
    page.locator("#step-prefill").wait_for()
    idle(page)
    more_settings(page)
    page.locator("#step-path").get_by_label("static cache (captured on a GPU)").check()
    page.click("#step-prefill")
    page.wait_for_selector("#step-chips .tok.prompt", timeout=60_000)
    for made in (1, 2):
        page.click("#step-step")
        page.wait_for_function(f"document.querySelectorAll('#step-chips .tok.gen').length === {made}", timeout=60_000)
    idle(page)
    line = page.get_by_text(PASS_LINE).first.inner_text()
    # no CUDA here: the static step runs as it is, and says so
    assert "computed alone by the static cache's step, uncaptured" in line, line
    assert "run by transformers' Llama modules" in line, line  # which implementation ran it (decoding.passes.IMPLS)
    page.close()
