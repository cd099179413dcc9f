"""The step tab's "What each layer would have said" panel, performed in headless Chromium on the bundled model: its
Try-this steps, 31 rows, the last row the chart's own distribution (the same floats), the marks, and the curve."""

import re

import pytest

from tests.helpers.pages import ARTIFACTS, figure, idle, until
from ui.step.lens import TRY_THIS
from visuals import lens as visuals

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
LONG = 180_000


@pytest.fixture
def page(step_page):
    return step_page


def rows(page) -> list[list[tuple[int, float]]]:
    """The table: per row, (token id, probability) of each top cell."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#lens-table tbody tr')].map(tr =>
             [...tr.querySelectorAll('td.tok')].map(td => [parseInt(td.dataset.id), parseFloat(td.dataset.p)]))"""
    )


# the lens table's box inside its panel, and its text at a projector's size: what does not hold, as words
FITS = """() => {
  const box = document.querySelector('.lens-box').getBoundingClientRect();
  const panel = document.querySelector('#step-lens').getBoundingClientRect();
  const size = parseFloat(getComputedStyle(document.querySelector('#lens-table')).fontSize);
  return [box.right > panel.right + 1 ? `box ends at ${box.right}, panel at ${panel.right}` : null,
          size < 15 ? `text ${size} px` : null].filter(x => x);
}"""


def model_probability(page) -> dict[int, float]:
    """The chart's bars: each token id -> the model's own probability, as the chart holds it."""
    bars = [t for t in figure(page, "step-dist")["data"] if t["customdata"]]
    return {int(c[0]): c[1] for t in bars for c in t["customdata"]}


def test_try_this_open_the_panel_at_a_step_31_rows_the_last_the_chart(page):
    # 1) Prefill, then open the panel: every layer's guess at the distribution on the chart
    assert "31 rows" in TRY_THIS and "␣Paris at 77%" in TRY_THIS and "Step** twice" in TRY_THIS
    page.click("#step-prefill")
    idle(page)
    page.locator("#step-lens").get_by_text("What each layer would have said").click()
    table = until(page, lambda: len(rows(page)) == 31 and rows(page), 240, "the lens table's 31 rows")
    idle(page)
    table, chart = rows(page), model_probability(page)
    final_token, final_p = table[-1][0]
    assert chart[final_token] == final_p  # the same float, bit for bit
    assert max(chart.values()) == final_p
    summary = page.locator("#step-lens-summary").inner_text()
    assert "␣Paris is first the top-1 at layer 30 (final)" in summary and "its final 77%" in summary
    assert re.search(r"\d+ ms on this server's cpu", summary)
    marks = page.locator("#lens-table .lens-mark").all_inner_texts()
    assert any(visuals.FIRST in m for m in marks) and any(visuals.HALF in m for m in marks)
    page.locator("#step-lens").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "step-lens-prefill.png"))
    # 2) Step: the step chooses from that very distribution, and the panel keeps to the chart
    page.click("#step-step")
    idle(page)
    until(page, lambda: page.locator("#step-chips .tok.gen").count() == 1, 120, "the first token")
    page.click("#step-step")
    until(page, lambda: page.locator("#step-chips .tok.gen").count() == 2, 120, "the second token")
    idle(page)

    # 3) the curve: every step taken with the panel open. The panel redraws after the chart (its stamp's change, one
    # more event) with its curve, table and headline together: the curve over 2 steps says the table is the second's
    def curve_over_two_steps():
        f = figure(page, "step-lens-agree")
        return f if f and f["data"] and "2 steps" in f["title"] else None

    curve = until(page, curve_over_two_steps, 120, "the curve over the 2 steps")
    assert len(curve["data"][0]["y"]) == 31
    assert all(0 <= y <= 1 for y in curve["data"][0]["y"])
    table, chart = rows(page), model_probability(page)
    assert len(table) == 31 and chart[table[-1][0][0]] == table[-1][0][1]
    # the headline names the token the step took (greedy: the final layer's top-1), and no column is cut
    summary = page.locator("#step-lens-summary").inner_text()
    assert summary.startswith("The step took ") and ", the final layer's top-1: it is first the top-1" in summary
    assert page.evaluate(FITS) == [], "the lens table runs past its panel"
    page.locator("#step-lens-agree").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "step-lens-curve.png"))
    # a token forced at rank 12: the headline names the token the step took, not the final layer's top-1
    twelfth = page.eval_on_selector("#step-candidate", "s => [...s.options].find(o => o.text.startsWith('#12 ')).value")
    page.select_option("#step-candidate", twelfth)
    page.click("#step-force")
    until(page, lambda: page.locator("#step-chips .tok.gen.forced").count() == 1, 120, "the forced token")
    idle(page)
    # the panel comes in the same answer as the chart: wait for the headline it draws
    forced = re.compile(r"The step took \S+ \(forced, rank 12 in the final row")

    def forced_headline():
        text = page.locator("#step-lens-summary").inner_text()
        return text if forced.match(text) else None

    summary = until(page, forced_headline, 120, "the lens headline of the forced step")
    assert "not the final layer's top-1" in summary
    # 4) a new run with the panel left open reads its lens at once
    page.click("#step-prefill")
    idle(page)
    fresh = "Step with this panel open"
    until(page, lambda: fresh in figure(page, "step-lens-agree")["annotations"][0], 120, "the new run's empty curve")
    table, chart = rows(page), model_probability(page)
    assert len(table) == 31 and chart[table[-1][0][0]] == table[-1][0][1]


def test_try_this_run_to_end_the_curve_covers_the_whole_run(page):
    # 3) with the panel open, Run to end: when the run stops, one more pass reads the curve over all its steps
    assert "Run to end" in TRY_THIS and "below 100% here" in TRY_THIS
    page.click("#step-prefill")
    idle(page)
    page.locator("#step-lens").get_by_text("What each layer would have said").click()
    until(page, lambda: len(rows(page)) == 31, 240, "the lens table's 31 rows")
    idle(page)
    page.click("#step-run-end")
    whole = "over the whole run"
    curve = until(
        page,
        lambda: whole in figure(page, "step-lens-agree")["title"] and figure(page, "step-lens-agree"),
        600,
        "the whole run's curve",
    )
    idle(page)
    steps = page.locator("#step-chips .tok.gen").count()
    curve = figure(page, "step-lens-agree")
    ys = curve["data"][0]["y"]
    assert len(ys) == 31 and f"({steps} steps)" in curve["title"] and all(0 <= y <= 1 for y in ys)
    note = page.locator("#step-lens-curve-note").inner_text()
    assert f"Over the whole run, {steps} steps: one more pass" in note and re.search(
        r"\d+ ms on this server's cpu", note
    )
    # the sampler drew tokens the final layer did not rank first: the curve's top end says so
    assert ys[-1] < 1 and f"final layer: {ys[-1]:.0%}" in curve["title"] and "did not rank first" in note
    assert "the lens pass" in page.locator("#step-orders").inner_text()  # the pass the last step chose from
    page.locator("#step-lens-agree").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "step-lens-whole-run.png"))
    # Back: another run now, the curve is the steps' own again (each read with the panel open)
    page.click("#step-back")
    idle(page)
    until(page, lambda: whole not in figure(page, "step-lens-agree")["title"], 120, "the steps' own curve")
    assert f"over {steps - 1} steps" in figure(page, "step-lens-agree")["title"]
