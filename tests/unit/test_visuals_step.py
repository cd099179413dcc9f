"""The step tab's figures, on hand-made steps: whole-vocabulary bars, fates, thresholds, escaped chips."""

import pytest

from decoding.inspector import Moved
from tests.helpers.charts import read_chart
from tests.helpers.made import TOP, make_step
from visuals import distribution
from visuals.glossary import term
from visuals.parts import changes
from visuals.step import penalties, sequence, timeline
from visuals.theme import CHOSEN, FORCED, REMOVED


def figure(*args, **kwargs):
    return read_chart(distribution.distribution_figure(*args, **kwargs))


def bars(fig):
    """Each bar's height by its x label (the marks and the cumulative line left out)."""
    return {x: y for s in fig.data for x, y, look in zip(s.x, s.y, s.looks) if look}


def test_model_probability_bars_are_whole_vocabulary_probabilities_never_renormalised():
    fig = figure(make_step(TOP), "model probability")
    heights = sorted(bars(fig).values(), reverse=True)
    assert heights == [0.4, 0.2, 0.06, 0.04]
    assert sum(heights) == pytest.approx(0.7)


def test_by_default_bars_are_what_the_next_token_is_drawn_from_with_the_model_probability_beside_each():
    fig = figure(make_step(TOP))  # the default mode
    assert distribution.MODES[0] == "after your settings"
    filled = {s.name: s.y for s in fig.data if s.looks and s.looks[0] == "solid"}
    assert filled == {"chosen": [0.6], "kept": [0.4]}  # after your settings: the survivors, renormalised
    outline = next(s for s in fig.data if s.name.startswith("removed by top-k"))
    assert outline.y == [0.06, 0.04] and set(outline.looks) == {"outline"}  # empty: nothing left
    assert set(outline.colours) == {REMOVED["top_k"]}
    marks = fig.series(distribution.MODEL_MARK)
    assert marks.y == [0.4, 0.2, 0.06, 0.04]  # the model's own probability, beside every bar


def test_probability_axis_is_fixed_so_a_flatter_distribution_looks_flatter():
    sharp = make_step([(1, "a", 5.0, 0.8, 0.9, None), (2, "b", 1.0, 0.1, 0.1, None)])
    flat = make_step([(1, "a", 5.0, 0.8, 0.3, None), (2, "b", 1.0, 0.1, 0.2, None)])
    for mode in ("after your settings", "model probability"):
        assert [figure(s, mode).y_range for s in (sharp, flat)] == [(0, 1.02), (0, 1.02)]
    assert max(bars(figure(flat)).values()) == 0.3


def test_logit_mode_shows_logits():
    assert sorted(bars(figure(make_step(TOP), "raw logits")).values()) == [2, 3, 4, 5]


def test_each_bar_is_coloured_by_its_fate_with_a_legend_name():
    fig = figure(make_step(TOP, token_id=2), "model probability")
    by_name = {s.name: s.colours[0] for s in fig.data if s.looks[0]}
    assert by_name["chosen"] == CHOSEN
    assert by_name["removed by top-k"] == REMOVED["top_k"]
    assert "kept" in by_name
    assert {"chosen", "kept", "removed by top-k"} <= set(fig.legend)  # never colour alone


def test_forced_token_is_marked_as_forced():
    fig = figure(make_step(TOP, token_id=3, forced=True))
    assert fig.series("forced by you").colours == [FORCED]


def test_chosen_token_below_the_top_n_still_gets_a_bar_with_its_rank():
    fig = figure(make_step(TOP, token_id=4), n=2)
    assert len(bars(fig)) == 3 and fig.labels[-1].endswith("(#4)")


def test_each_column_is_its_token_for_a_click_to_force():
    fig = figure(make_step(TOP))
    assert fig.keys == ["1", "2", "3", "4"]


def test_thresholds_are_drawn_for_top_k_top_p_and_min_p():
    fig = figure(make_step(TOP), "model probability")
    texts = " ".join(fig.annotations)
    assert "top-k = 2" in texts and "top-p = 0.6" in texts and "min-p" in texts
    assert fig.series("cumulative mass").y == pytest.approx([0.4, 0.6, 0.66, 0.7])


def test_greedy_draws_no_thresholds():
    fig = figure(make_step(TOP, settings={"temperature": 0.0}))
    assert not fig.annotations


def test_title_flags_a_near_tie():
    tie = [(1, "a", 1.0, 0.30, 0.5, None), (2, "b", 1.0, 0.29, 0.5, None)]
    assert "near-tie" in figure(make_step(tie)).title
    assert "near-tie" not in figure(make_step(TOP)).title


def test_title_says_the_entropy_is_the_models_own_which_temperature_does_not_change():
    assert "model's entropy 1.50 bits" in figure(make_step(TOP)).title


def test_a_chosen_token_the_model_gave_next_to_nothing_says_so_rather_than_zero():
    fig = figure(make_step(TOP, token_id=4))
    assert "model p = 0.040" in fig.sub
    assert distribution.probability(0.0002) == "< 0.001" and distribution.probability(0.0) == "0.000"


def test_token_text_is_escaped_in_the_chart():
    html = distribution.distribution_figure(make_step(TOP, token_id=4))
    assert "<b>" not in html and "&lt;b&gt;" in html


def test_unknown_mode_is_refused_with_the_allowed_modes():
    with pytest.raises(ValueError, match="mode must be one of"):
        distribution.distribution_figure(make_step(TOP), "log-odds")


def test_chips_escape_html_and_show_leading_spaces():
    html = sequence.chips_html(["<script>", " x"], [7, 8], [make_step(TOP, token_id=4)])
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "␣x" in html
    assert "&lt;b&gt;" in html  # the generated token's text too


def test_chip_hover_names_id_probability_and_rank_and_marks_forced():
    html = sequence.chips_html([], [], [make_step(TOP, token_id=3, forced=True)])
    assert "id 3" in html and "p = 0.000" in html and "rank 3" in html and "forced by you" in html


def test_held_back_text_is_shown_as_held():
    assert "held back" in sequence.stop_html(None, "Th", "abc")
    finished = sequence.stop_html("max_new_tokens", "", "abc")
    assert 'data-stop="max_new_tokens"' in finished
    assert "finished" in finished and "press Prefill to run again with the new settings" in finished


def test_loop_lights_the_current_phase_only():
    html = sequence.loop_html("sample", 3, 9)
    assert html.count("background:") == 1 and f"step 3: one {term('forward pass')} over 9 tokens" in html
    with pytest.raises(ValueError):
        sequence.loop_html("think", 1, 1)


def test_request_numbers_separate_prefill_from_decode():
    n = timeline.request_numbers(100.0, [100.0, 50.0, 50.0], [1.0, 1.0, 1.0])
    assert n.ttft_ms == 101.0
    assert n.tpot_ms == 51.0
    assert n.decode_share == pytest.approx(100 / 203)
    assert n.tokens_per_s == pytest.approx(1000 / 51.0)
    assert timeline.request_numbers(10.0, [], []) is None


def test_time_per_output_token_shows_a_dash_until_there_are_two_tokens():
    one = timeline.request_numbers(100.0, [100.0], [1.0])
    tpot = term("TPOT", "time per output token")  # written out, the abbreviation's explanation on hover
    assert f"{tpot}** —" in one.markdown() and "nan" not in one.markdown()
    two = timeline.request_numbers(100.0, [100.0, 50.0], [1.0, 1.0]).markdown()
    assert f"**{tpot}** 51.0 ms" in two


def test_timeline_has_one_prefill_bar_and_a_bar_per_decode_step():
    fig = read_chart(timeline.request_timeline(timeline.Prefill(100.0), [100.0, 50.0], [1.0, 2.0], [3.0, 4.0]).html)
    names = {s.name: s.y for s in fig.data}
    assert names["prefill (whole prompt)"] == [100.0]
    assert names["sampling"] == [1.0, 2.0] and names["drawing (server)"] == [3.0, 4.0]
    assert fig.labels == ["prefill", "1", "2"]


def test_a_prefill_copied_from_the_prefix_cache_is_drawn_as_a_copy_with_what_computing_it_took():
    copied = timeline.request_timeline(timeline.Prefill(8.0, copied=True, computed_ms=245.0), [8.0, 50.0], [1.0, 1.0])
    fig = read_chart(copied.html)
    assert fig.names[0] == timeline.COPIED_NAME and fig.data[0].looks == ["outline"]
    assert "computing it took 245.0 ms" in copied.html and fig.labels[0] == "prefill (copy)"


def test_a_new_step_sends_only_its_column_and_the_axis_when_it_grew():
    one = timeline.request_timeline(timeline.Prefill(100.0), [100.0], [1.0], [2.0])
    two = timeline.request_timeline(timeline.Prefill(100.0), [100.0, 50.0], [1.0, 1.0], [2.0, 2.0])
    ops = changes(one, two)
    assert [op[0] for op in ops] == ["append", "append"]  # a column and its label; the axis did not change
    tall = timeline.request_timeline(timeline.Prefill(100.0), [100.0, 300.0], [1.0, 1.0], [2.0, 2.0])
    assert {op[0] for op in changes(one, tall)} == {"attr", "html", "append"}  # a taller axis: the range, its ticks


def test_tokens_per_second_and_time_per_output_token_agree():
    n = timeline.request_numbers(100.0, [100.0, 50.0, 50.0], [1.0, 1.0, 1.0])
    assert n.tokens_per_s == pytest.approx(1000 / n.tpot_ms)


def test_penalties_figure_shows_before_and_after():
    moved = [Moved(5, " cat", 4.0, 2.0)]
    fig = read_chart(penalties.penalties_figure(moved, active=True))
    assert [(s.name, s.y) for s in fig.data] == [("logit before", [4.0]), ("after penalties", [2.0])]
    assert "lc-empty" in penalties.penalties_figure([], active=False)
