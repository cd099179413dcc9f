"""The step tab's figures, on hand-made steps: whole-vocabulary bars, fates, thresholds, escaped chips."""

import pytest

from decoding.inspector import Moved
from tests.helpers.made import TOP, make_step
from visuals import distribution
from visuals.glossary import term
from visuals.step import penalties, sequence, timeline
from visuals.theme import CHOSEN, FORCED, REMOVED


def bars(fig):
    return {x: y for t in fig.data if t.type == "bar" for x, y in zip(t.x, t.y)}


def test_model_probability_bars_are_whole_vocabulary_probabilities_never_renormalised():
    fig = distribution.distribution_figure(make_step(TOP), "model probability")
    heights = sorted(bars(fig).values(), reverse=True)
    assert heights == [0.4, 0.2, 0.06, 0.04]
    assert sum(heights) == pytest.approx(0.7)


def test_by_default_bars_are_what_the_next_token_is_drawn_from_with_the_model_probability_beside_each():
    fig = distribution.distribution_figure(make_step(TOP))  # the default mode
    assert distribution.MODES[0] == "after your settings"
    filled = {t.name: list(t.y) for t in fig.data if t.type == "bar" and t.marker.color != "rgba(0,0,0,0)"}
    assert filled == {"chosen": [0.6], "kept": [0.4]}  # after your settings: the survivors, renormalised
    outline = next(t for t in fig.data if t.name.startswith("removed by top-k"))
    assert list(outline.y) == [0.06, 0.04] and outline.marker.line.color == REMOVED["top_k"]  # empty: nothing left
    marks = next(t for t in fig.data if t.name == distribution.MODEL_MARK)
    assert list(marks.y) == [0.4, 0.2, 0.06, 0.04]  # the model's own probability, beside every bar


def test_probability_axis_is_fixed_so_a_flatter_distribution_looks_flatter():
    sharp = make_step([(1, "a", 5.0, 0.8, 0.9, None), (2, "b", 1.0, 0.1, 0.1, None)])
    flat = make_step([(1, "a", 5.0, 0.8, 0.3, None), (2, "b", 1.0, 0.1, 0.2, None)])
    for mode in ("after your settings", "model probability"):
        ranges = [tuple(distribution.distribution_figure(s, mode).layout.yaxis.range) for s in (sharp, flat)]
        assert ranges == [(0, 1.02), (0, 1.02)]
    assert max(bars(distribution.distribution_figure(flat)).values()) == 0.3


def test_logit_mode_shows_logits():
    assert sorted(bars(distribution.distribution_figure(make_step(TOP), "raw logits")).values()) == [2, 3, 4, 5]


def test_each_bar_is_coloured_by_its_fate_with_a_legend_name():
    fig = distribution.distribution_figure(make_step(TOP, token_id=2), "model probability")
    by_name = {t.name: t.marker.color for t in fig.data if t.type == "bar"}
    assert by_name["chosen"] == CHOSEN
    assert by_name["removed by top-k"] == REMOVED["top_k"]
    assert "kept" in by_name


def test_forced_token_is_marked_as_forced():
    fig = distribution.distribution_figure(make_step(TOP, token_id=3, forced=True))
    assert {t.name: t.marker.color for t in fig.data if t.type == "bar"}["forced by you"] == FORCED


def test_chosen_token_below_the_top_n_still_gets_a_bar_with_its_rank():
    fig = distribution.distribution_figure(make_step(TOP, token_id=4), n=2)
    order = list(fig.layout.xaxis.categoryarray)
    assert len(bars(fig)) == 3 and order[-1].startswith("<b>") and "(#4)" in order[-1]


def test_thresholds_are_drawn_for_top_k_top_p_and_min_p():
    fig = distribution.distribution_figure(make_step(TOP), "model probability")
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "top-k = 2" in texts and "top-p = 0.6" in texts and "min-p" in texts
    cumulative = next(t for t in fig.data if t.name == "cumulative mass")
    assert list(cumulative.y) == pytest.approx([0.4, 0.6, 0.66, 0.7])


def test_greedy_draws_no_thresholds():
    fig = distribution.distribution_figure(make_step(TOP, settings={"temperature": 0.0}))
    assert not fig.layout.annotations


def test_title_flags_a_near_tie():
    tie = [(1, "a", 1.0, 0.30, 0.5, None), (2, "b", 1.0, 0.29, 0.5, None)]
    assert "near-tie" in distribution.distribution_figure(make_step(tie)).layout.title.text
    assert "near-tie" not in distribution.distribution_figure(make_step(TOP)).layout.title.text


def test_title_says_the_entropy_is_the_models_own_which_temperature_does_not_change():
    title = distribution.distribution_figure(make_step(TOP)).layout.title.text
    assert "model's entropy 1.50 bits" in title


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
    assert "id 3" in html and "p=0.000" in html and "rank 3" in html and "forced by you" in html


def test_held_back_text_is_shown_as_held():
    assert "held back" in sequence.stop_html(None, "Th", "abc")
    finished = sequence.stop_html("max_new_tokens", "", "abc")
    assert 'data-stop="max_new_tokens"' in finished
    assert "finished" in finished and "press Prefill to run again with the new settings" in finished


def test_loop_lights_the_current_phase_only():
    html = sequence.loop_html("sample", 3, 9)
    assert html.count("background:") == 1 and "step 3: one forward pass" in html
    with pytest.raises(ValueError):
        sequence.loop_html("think", 1, 1)


def test_request_numbers_separate_prefill_from_decode():
    n = timeline.request_numbers(100.0, [100.0, 50.0, 50.0], [1.0, 1.0, 1.0])
    assert n.ttft_ms == 101.0
    assert n.tpot_ms == 51.0
    assert n.decode_share == pytest.approx(100 / 203)
    assert n.tokens_per_s == pytest.approx(3 / 0.203)
    assert timeline.request_numbers(10.0, [], []) is None


def test_time_per_output_token_shows_a_dash_until_there_are_two_tokens():
    one = timeline.request_numbers(100.0, [100.0], [1.0])
    tpot = term("TPOT", "time per output token")  # written out, the abbreviation's explanation on hover
    assert f"{tpot}** —" in one.markdown() and "nan" not in one.markdown()
    two = timeline.request_numbers(100.0, [100.0, 50.0], [1.0, 1.0]).markdown()
    assert f"**{tpot}** 51.0 ms" in two


def test_timeline_has_one_prefill_bar_and_a_bar_per_decode_step():
    fig = timeline.request_timeline_figure(100.0, [100.0, 50.0], [1.0, 2.0], [3.0, 4.0])
    names = {t.name: list(t.y) for t in fig.data}
    assert names["prefill (whole prompt)"] == [100.0]
    assert names["sampling"] == [1.0, 2.0] and names["drawing (server)"] == [3.0, 4.0]


def test_penalties_figure_shows_before_and_after():
    moved = [Moved(5, " cat", 4.0, 2.0)]
    fig = penalties.penalties_figure(moved, active=True)
    assert [list(t.x) for t in fig.data] == [[4.0], [2.0]]
    assert not penalties.penalties_figure([], active=False).data
