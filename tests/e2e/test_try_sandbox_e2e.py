"""The Sampler sandbox's "Try this" steps and presets, done through the page's controls in headless Chromium; each
asserts what its text says is drawn. No model runs in this tab."""

import re

import pytest

from decoding.sandbox import PRESETS
from tests.helpers.contrast import contrast_problems
from tests.helpers.pages import figure, pick, set_number, until, wait_figure
from ui.sandbox.tab import SPEC

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


TAB = (SPEC.title, "#sandbox-strategies .lc-panels")  # the module's page (tests/e2e/conftest.py)


def panel(fig: dict, name: str) -> str:
    """The title of the panel whose strategy is `name` (greedy, top-p, min-p...), its lines joined by spaces."""
    title = next(t for t in fig["annotations"] if re.match(rf"{re.escape(name)}\b", t))
    return title.replace("\n", " ")


def kept(fig: dict, name: str) -> int:
    return int(re.search(r"keeps ([\d,]+)", panel(fig, name)).group(1).replace(",", ""))


def mass(fig: dict, name: str) -> float:
    return float(re.search(r"\(([\d.]+)% of mass\)", panel(fig, name)).group(1))


def test_the_sandbox_try_this_steps_do_what_they_say(page):
    # 1. the reference exercise is loaded; top-p 0.9 keeps a flood of the 31,995 tail tokens, shown in its rest bar
    assert page.locator("#sandbox-logits textarea").input_value() == "10, 9.9, 9.8, 5, 4, 0 x 31995"
    fig = figure(page, "sandbox-strategies")
    assert kept(fig, "top-p") > 20_000
    top_p_axis = next(t["xaxis"] for t in fig["data"] if t["name"] == "removed by top-p")
    kept_bars = next(t for t in fig["data"] if t["name"] == "kept" and t["xaxis"] == top_p_axis)
    assert kept_bars["x"][-1] == "rest" and kept_bars["y"][-1] > 0.2, "the rest bar's kept part is drawn"
    # 2. min-p's floor (10% of the top token) keeps the top three
    assert kept(fig, "min-p") == 3
    # 3. a short tail: top-p keeps 3 as well
    logits = page.locator("#sandbox-logits textarea")
    logits.fill("10, 9.9, 9.8, 5, 4, 0 x 95")
    logits.press("Enter")
    wait_figure(page, "sandbox-strategies", "f.annotations.some(a => a.startsWith('top-p 0.9\\nkeeps 3\\n'))")
    # 4. the exercise again: in the sweep, top-p's count climbs with temperature, min-p's stays small
    pick(page, "sandbox-preset", "reference exercise")
    wait_figure(page, "sandbox-strategies", "/keeps 22,\\d{3}\\n/.test(f.annotations.join(' '))")
    # the sweep is another chart of the same event, drawn on its own: wait until it is the exercise's (the short
    # tail's has 100 tokens, so no count above 100)
    sweep = wait_figure(page, "sandbox-sweep", "f.data.some(t => t.name.startsWith('top-p') && Math.max(...t.y) > 100)")
    top_p = next(t["y"] for t in sweep["data"] if t["name"].startswith("top-p"))
    min_p = next(t["y"] for t in sweep["data"] if t["name"].startswith("min-p"))
    assert top_p == sorted(top_p) and top_p[-1] > 1000 * top_p[0]
    assert max(min_p) <= 5
    # 5. a two-way tie at temperature 1.5: transformers' and vLLM's orders keep different tokens
    pick(page, "sandbox-preset", "two-way tie")
    set_number(page, "sandbox-temperature", 1.5)
    wait_figure(page, "sandbox-strategies", "f.annotations.some(a => a.startsWith('temperature 1.5\\n'))")
    orders = page.locator("#sandbox-orders")
    orders.get_by_text("The orders keep different tokens").wait_for()
    rows = {r.split("\t")[0]: r for r in orders.locator("tr").all_inner_texts()}
    assert rows["transformers"].split("\t")[2] != rows["vllm"].split("\t")[2]


@pytest.mark.parametrize(
    "preset, claim",
    [
        ("confident", "greedy's token holds most of the mass"),
        ("flat", "no token stands out"),
        ("two-way tie", "the top two tokens are tied"),
        ("reference exercise", "the exercise's logits"),
    ],
)
def test_each_sandbox_preset_draws_what_its_name_says(page, preset, claim):
    pick(page, "sandbox-preset", preset)
    until(page, lambda: page.locator("#sandbox-logits textarea").input_value() == PRESETS[preset], what=preset)
    until(page, lambda: CLAIMS[preset](figure(page, "sandbox-strategies")), what=f"{preset}: {claim}")


def _greedy_probs(fig: dict) -> list[float]:
    """The greedy panel's top-20 probabilities, largest first (its last removed bar is the rest)."""
    bars = {t["name"]: t["y"] for t in fig["data"] if t["xaxis"] == "x"}
    return sorted(bars["chosen by greedy"] + bars["not greedy's pick"][:-1], reverse=True)


CLAIMS = {
    "confident": lambda fig: mass(fig, "greedy") > 90,
    "flat": lambda fig: mass(fig, "greedy") < 1,
    "two-way tie": lambda fig: (p := _greedy_probs(fig))[0] == pytest.approx(p[1]) and p[1] > 2 * p[2],
    "reference exercise": lambda fig: kept(fig, "min-p") == 3 and kept(fig, "top-p") > 20_000,
}


def test_the_sandbox_text_and_charts_meet_wcag_aa_contrast(page):
    assert contrast_problems(page) == []
