"""The Prefill vs decode tab's "Try this" steps, done through the page's controls in headless Chromium on the bundled
model (float32, CPU), with the tab's smallest plan (quick); each asserts what its text says is drawn: the roofline's
points, the request timeline, the calculator's floor per token."""

import re

import pytest

from tests.helpers.contrast import contrast_problems
from tests.helpers.pages import figure, idle, until
from ui.timing.tab import SPEC

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
MEASURE_S = 400  # the quick plan takes about a minute alone on two cores; other tests share the machine


TAB = (SPEC.title, "#timing-measure")  # the module's page (tests/e2e/conftest.py)


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
    assert re.search(r"ran at \d+% of the memory bandwidth", page.locator("#timing-roofline-note").inner_text())
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


REGIMES_S = 600  # three model sizes built and timed, the largest 6.8 GB, beside the other tests on two cores
# each size's name drawn by its dot, and not clipped at the plot area's edge (plotly hides what runs past it)
NAMES_CLIPPED = """
id => {
  const area = document.querySelector(`#${id} .nsewdrag`).getBoundingClientRect();
  return [...document.querySelectorAll(`#${id} .textpoint text`)].map(t => [t.textContent, t.getBoundingClientRect()])
    .filter(([, b]) => b.width && (b.left < area.left - 1 || b.right > area.right + 1 || b.top < area.top - 1
      || b.bottom > area.bottom + 1))
    .map(([text]) => `"${text}" clipped at the plot area's edge`);
}
"""


def regime_map_not_drawn_whole(page) -> list[str]:
    """What a person would see go wrong in the regime map's chart alone (tests/test_layout_e2e.py checks the tab's
    other charts, each as its own action draws it): text cut, covering a plot area or another text, names clipped."""
    from tests.helpers.pages import texts_cut, texts_over_plots, texts_over_texts

    mine = ("Regime map", "the floor", "eager step", "static step", "captured step", "weights read per", "ms per token")
    covered = [t for t in texts_over_texts(page) if any(f'"{m}' in t for m in mine)]
    chart = "#timing-regimes"
    return texts_cut(page, chart) + texts_over_plots(page, chart) + covered + page.evaluate(NAMES_CLIPPED, chart[1:])


def test_the_regime_map_draws_every_size_beside_the_bytes_line_on_every_screen(page):
    from tests.helpers.pages import ARTIFACTS, shares_the_screen, wait_figure

    page.locator("#timing-regimes-map").get_by_text(re.compile(r"^Regime map")).first.click()
    page.click("#timing-regimes-btn")
    wait_figure(page, "timing-regimes", "f.data.some(t => (t.name || '').startsWith('eager'))", REGIMES_S * 1000)
    idle(page, REGIMES_S)  # the map is drawn as each size is timed: read it once the event has ended
    fig = figure(page, "timing-regimes")
    note = page.locator("#timing-regimes-note").inner_text()
    # the dashed floor line first, then the eager step: the bundled shape, 360M and 1.7B, growing in bytes (a size
    # whose weights do not fit the free memory is left out, and the note says so: then this says what was free)
    line = fig["data"][0]
    assert line["name"].startswith("the floor: bytes ÷ bandwidth") and len(line["x"]) > 2
    eager = next(t for t in fig["data"] if t["name"].startswith("eager"))
    # 1.7B's 6.8 GB of random weights fit only while the suite's other lane leaves the memory free: drawn, or left
    # out with the free memory said
    assert eager["text"][:2] == ["SmolLM2-135M", "SmolLM2-360M"], note
    assert eager["text"][2:] == ["SmolLM2-1.7B"] or re.search(
        r"SmolLM2-1\.7B \([\d.]+ GB of weights, [\d.]+ GB free\)", note
    )
    assert eager["x"] == sorted(eager["x"])
    assert not any(t["name"].startswith("captured") for t in fig["data"])  # no CUDA here: no captured step
    static = next(t for t in fig["data"] if t["name"].startswith("static"))  # the static cache's step, uncaptured
    assert len(static["x"]) == len(eager["x"])
    assert "ms per token at SmolLM2-135M" in note and "measured on a GPU only" in note
    assert "random weights" in page.locator("#timing-regimes-map").inner_text()
    # what a person sees: at 1280x720, in projector mode, and at 800 px, the button and the chart share the screen
    # and the chart is drawn whole
    ARTIFACTS.mkdir(exist_ok=True)
    seen = {}
    for name, width, projector in (("720p", 1280, False), ("800px", 800, False), ("720p-projector", 1280, True)):
        if projector and not page.evaluate("document.body.classList.contains('projector')"):
            page.locator("#projector input").check()
            page.wait_for_function("document.body.classList.contains('projector')")
        page.set_viewport_size({"width": width, "height": 720})  # after the zoom: the charts lay out again at its size
        idle(page)
        fits = shares_the_screen(page, "#timing-regimes-btn", "#timing-regimes")["fits"]
        seen[name] = (fits, regime_map_not_drawn_whole(page))
        page.screenshot(path=str(ARTIFACTS / f"e2e-regimes-{name}.png"))
    assert seen == {name: (True, []) for name in seen}
