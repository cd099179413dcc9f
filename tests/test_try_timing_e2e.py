"""The Prefill vs decode tab's "Try this" steps, done through the page's controls in headless Chromium on the bundled
model (float32, CPU), with the tab's smallest plan (quick); each asserts what its text says is drawn: the roofline's
points, the request timeline, the calculator's floor per token."""

import re

import pytest

from tests.contrast import contrast_problems
from tests.pages import figure, idle, open_tab, until

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
MEASURE_S = 400  # the quick plan takes about a minute alone on two cores; other tests share the machine


@pytest.fixture(scope="module")
def page(browser, app_url):
    page = open_tab(browser, app_url, "Prefill vs decode", "#timing-measure")
    yield page
    page.close()


def decode_points(page) -> list[tuple[int, float, float]]:
    """(batch size, FLOP/byte, GFLOP/s) of every decode dot on the roofline, by batch size."""
    trace = next(t for t in figure(page, "timing-roofline")["data"] if t["name"] == "decode step (batch size)")
    return sorted((int(label[2:]), x, y) for label, x, y in zip(trace["text"], trace["x"], trace["y"]))


def floor_ms(page, hardware: str) -> float:
    """The results table's floor per token (ms) on the first row for this hardware."""
    table = page.locator("#timing-results")
    head = table.locator("[role=columnheader]").all_inner_texts()
    col = next(i for i, h in enumerate(head) if h.strip().startswith("floor ms"))
    row = table.locator("[role=row]").filter(has_text=hardware).first
    return float(row.locator("[role=gridcell]").nth(col).inner_text())


def test_the_timing_try_this_steps_do_what_they_say(page):
    # 1. Measure with the quick plan: the loaded model timed on this machine (or the server's kept measurement)
    assert page.get_by_role("radio", name=re.compile("quick")).is_checked()
    page.click("#timing-measure")
    until(
        page,
        lambda: "measured" in page.locator("#timing-summary").inner_text().lower() and decode_points(page),
        MEASURE_S,
        "a measurement",
    )
    idle(page, MEASURE_S)
    # 2. b=1 is the decode dot furthest left, and the sentence under the chart gives its share of the bandwidth
    points = decode_points(page)
    assert points[0][0] == 1 and points[0][1] == min(x for _, x, _ in points)
    assert re.search(
        r"ran at \d+% of this machine's memory bandwidth", page.locator("#timing-roofline-note").inner_text()
    )
    # 3. as the batch grows the decode dots move right (more FLOPs per byte) and up (more FLOP/s)
    assert [x for _, x, _ in points] == sorted(x for _, x, _ in points) and len(points) >= 3
    assert points[-1][2] > points[0][2]
    # 4. the request timeline: one prefill block, then the decode steps, each labelled with its time
    request = figure(page, "timing-request")
    labels = " ".join(request["annotations"])
    assert re.search(r"prefill</b> \d+ ms", labels) and re.search(r"\d+ decode steps</b> \d+ ms", labels)
    # 5. the calculator: bytes per parameter 2 -> 1 (INT8) halves the floor per token (weights / bandwidth)
    before = floor_ms(page, "NVIDIA A10")
    row = page.locator("#timing-inputs [role=row]").filter(has_text="NVIDIA A10").first
    row.locator("[role=gridcell]").nth(2).dblclick()  # bytes/param
    page.keyboard.press("Control+A")
    page.keyboard.type("1")
    page.keyboard.press("Enter")
    until(page, lambda: floor_ms(page, "NVIDIA A10") == pytest.approx(before / 2, rel=0.01), 30, "the floor halved")


def test_the_timing_tab_text_and_charts_meet_wcag_aa_contrast(page):
    assert contrast_problems(page) == []
