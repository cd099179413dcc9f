"""visuals/strategies.py and visuals/sandbox/views.py from hand-made results (the sweep sentence from a real sweep),
and the sandbox tab's handler:
panels, bars and colours by fate, the sweep's axes, the order table, errors that name the value."""

import gradio as gr
import pytest

from decoding.inspector import Inspection
from decoding.sandbox import OrderComparison, OrderResult, Sweep, preset_logits, temperature_sweep
from tests.helpers.charts import read_chart
from tests.helpers.made import RESULTS, alone
from ui.strategy_code import strategy_source
from visuals.sandbox.views import describe_sweep, orders_markdown, orders_table, sweep_figure
from visuals.strategies import percent, strategies_figure
from visuals.theme import CHOSEN, KEPT, REMOVED


def panels(html: str) -> list:
    """Each panel of the grid, read as its own chart."""
    return [read_chart(part) for part in html.split('<div class="lc-panel">')[1:]]


def test_one_panel_per_strategy_with_its_title():
    drawn = strategies_figure(RESULTS)
    assert read_chart(drawn).charts == 3
    titles = [p.split("</div>")[0] for p in drawn.split('<div class="lc-panel-title">')[1:]]
    assert "<span>keeps 1</span><span>(50% of mass)</span>" in titles[0]
    assert titles[1].startswith("<b>top-k 2</b>") and "<span>keeps 2</span>" in titles[1]


def test_bars_are_coloured_by_fate():
    greedy, top_k, _ = panels(strategies_figure(RESULTS))
    by_fate = lambda chart: {s.name: (s.colours[0], len(s.y)) for s in chart.data if s.looks[0]}  # noqa: E731
    assert by_fate(greedy) == {"chosen by greedy": (CHOSEN, 1), "not greedy's pick": ("#999999", 3)}
    assert by_fate(top_k) == {"kept": (KEPT, 2), "removed by top-k": (REMOVED["top_k"], 2)}
    removed = top_k.series("removed by top-k")
    assert set(removed.looks) == {"pale"}  # hatched: never colour alone


def test_the_rest_is_one_stacked_bar_kept_below_removed():
    drawn = strategies_figure(RESULTS)
    third = panels(drawn)[2]
    kept, removed = third.series("kept"), third.series("removed by top-p")
    # 3 kept + the rest's kept part; 1 removed + the rest's removed part, stacked on the kept part
    assert kept.x == ["1", "2", "3", "rest"] and removed.x == ["4", "rest"]
    assert removed.y[-1] == 0.02 and 'style="--c:#56B4E9;--b:0.05;--v:0.02;"' in drawn
    assert [label for label in third.labels if label] == ["1", "rest"]


def test_legend_names_each_fate_once():
    legend = read_chart(strategies_figure(RESULTS)).legend
    assert len(legend) == len(set(legend))


def test_top_k_title_explains_ties():
    tied = alone("top_k", [True, True, True, True], value=3)
    assert "ties kept" in strategies_figure([tied])


def test_percent_reads_at_a_glance():
    assert [percent(x) for x in (1.0, 0.9952, 0.65, 0.064, 0.0026)] == ["100%", "99.5%", "65%", "6.4%", "0.26%"]


def test_sweep_figure_draws_counts_on_a_log_axis_and_mass():
    sweep = Sweep(
        temperatures=[0.5, 1.0, 2.0],
        top_p=0.9,
        min_p=0.1,
        vocab=100,
        top_p_kept=[2, 50, 90],
        min_p_kept=[2, 3, 4],
        top_p_mass=[0.95, 0.9, 0.9],
        min_p_mass=[0.99, 0.7, 0.2],
    )
    fig = sweep_figure(sweep)
    assert fig.layout.yaxis.type == "log"
    assert [(t.name, list(t.y)) for t in fig.data if t.xaxis == "x"] == [
        ("top-p 0.9", [2, 50, 90]),
        ("min-p 0.1", [2, 3, 4]),
    ]
    assert [list(t.y) for t in fig.data if t.xaxis == "x2"] == [[0.95, 0.9, 0.9], [0.99, 0.7, 0.2]]


def test_orders_table_lists_each_order_and_the_tokens_they_disagree_on():
    orders = [
        OrderResult("transformers", ("top_p", "min_p"), 2, 0.8),
        OrderResult("vllm", ("min_p", "top_p"), 1, 0.5),
        OrderResult("llama.cpp", ("top_p", "min_p"), 2, 0.8),
    ]
    html = orders_table(OrderComparison(orders, [(1, 0.3, ("transformers", "llama.cpp"))], 1), {1: "<b>cat</b>"})
    assert "min-p → top-p" in html and "different tokens" in html
    assert "&lt;b&gt;cat&lt;/b&gt;" in html  # token text is escaped
    assert "<td style" in html and ">vllm</td>" in html  # removed by vllm
    same = orders_table(OrderComparison(orders[:1], [], 0))
    assert "the same tokens" in same


def test_describe_sweep_states_the_measured_numbers():
    text = describe_sweep(temperature_sweep(preset_logits("reference exercise")))
    assert "2 → 28,792" in text and "3 → 5" in text and "top-p 22,782, min-p 3" in text
    assert "5,758×" in text and "floods" in text  # 28,792 / 5
    calm = describe_sweep(temperature_sweep(preset_logits("flat")))
    assert "floods" not in calm


def test_the_code_view_reads_the_project_functions():
    assert strategy_source("top_k").startswith("# decoding.samplers.top_k_mask\ndef top_k_mask(")
    assert "torch.argmax" in strategy_source("greedy")
    with pytest.raises(gr.Error, match="strategy must be one of"):
        strategy_source("beam")


def test_orders_line_marks_your_order_and_shows_token_boundaries():
    found = Inspection([], False, {"transformers": 2, "vllm": 1}, [(" cat", ("transformers",))])
    line = orders_markdown(found, "vllm")
    assert "**vllm** keeps 1 (yours)" in line and "`␣cat` (kept by transformers)" in line
    same = orders_markdown(Inspection([], False, {"transformers": 2}, []), "transformers")
    assert "identical" in same and "Prefill" in orders_markdown(None, "vllm")
