"""The continuous-batching lesson's figures and sentences, from hand-made ticks, summaries and noise."""

import pytest

from decoding.serving.scheduler import Noise
from decoding.serving.traffic import Tick, summary
from tests.helpers.charts import read_chart
from visuals.glossary import term
from visuals.parts import changes
from visuals.serving import blocks, cost, view
from visuals.serving import ticks as ticks_chart
from visuals.serving import traffic as vis

NOW = 1_000.0
NOISE = Noise(4.3e-05, 3, "float32")


def tick(ago, rows, ms=50.0, decode=None, prefill=0, mode="packed"):
    return Tick(
        at=NOW - ago,
        ms=ms,
        rows=rows,
        decode_rows=rows if decode is None else decode,
        prefill_tokens=prefill,
        mode=mode,
    )


def origin_now() -> float:
    return ticks_chart.origin_for(NOW)


# --- the passes over the last minute ---


def test_no_ticks_draw_the_empty_state_that_says_how_to_make_traffic():
    for ticks in ([], [tick(500, 4)]):  # nothing, or nothing in the last minute
        drawn = view.traffic_view("", ticks, NOW, "", "", "").html
        assert vis.NO_TRAFFIC in drawn and not read_chart(drawn).data
        assert "open simulated students above" in vis.NO_TRAFFIC  # the controls sit above the charts


def test_each_pass_is_a_bar_of_its_students_split_into_decoding_and_prompt_reading():
    ticks = [tick(10, 30, ms=240), tick(5, 5, ms=300, decode=4, prefill=64), tick(1, 1, ms=35, mode="solo")]
    chart = read_chart(view.traffic_view("", ticks, NOW, "", "", "").html)
    decoding, prompts = chart.series(ticks_chart.DECODING), chart.series(ticks_chart.READING)
    assert decoding.y == [30, 4, 1] and prompts.y == [1]  # stacked: only the pass that read a prompt has the second
    # each pass's numbers (students, decoding, prompt tokens, ms), and where it ended, from the view's origin
    assert [c[0] for c in decoding.customdata] == [30, 5, 1]
    ends = [float(x) for x in decoding.x]
    assert ends == pytest.approx([NOW - 10 - origin_now(), NOW - 5 - origin_now(), NOW - 1 - origin_now()])
    assert chart.series(ticks_chart.PROMPT).y == [64]  # the diamond on the right axis
    html = view.traffic_view("", ticks, NOW, "", "", "").html
    assert ticks_chart.TITLE in html and "seconds before now" in html and "prompt tokens (right axis)" in html


def test_without_prefill_there_is_no_prompt_token_axis():
    parts = view.traffic_view("", [tick(3, 8), tick(2, 8)], NOW, "", "", "")
    assert read_chart(parts.html).names == [ticks_chart.DECODING]
    assert parts.slots["#serving-ticks .lc-y2"] == "" and ticks_chart.PROMPT not in parts.html


def test_ticks_older_than_the_window_are_left_out():
    chart = read_chart(view.traffic_view("", [tick(200, 9), tick(30, 3)], NOW, "", "", "").html)
    assert chart.series(ticks_chart.DECODING).y == [3]


def test_a_refresh_sends_the_new_passes_drops_those_that_left_and_moves_the_window():
    ticks = [tick(59, 2), tick(30, 3), tick(20, 4)]
    before = view.traffic_view("", ticks, NOW, "", "", "")
    later = [t for t in ticks] + [tick(-1.5, 5)]  # 2 s on: the oldest pass has left the window, a new one came
    after = view.traffic_view("", later, NOW + 2, "", "", "")
    ops = changes(before, after)
    strip = "#serving-ticks .serving-passes"
    assert ["shift", strip, 1] in ops
    appended = [op for op in ops if op[0] == "append" and op[1] == strip]
    assert len(appended) == 1 and read_chart(appended[0][2]).series(ticks_chart.DECODING).y == [5]
    assert any(op[0] == "attr" and op[1] == "#serving-ticks .lc-plot" for op in ops)  # the window moved


# --- tick time against batch size ---

TRAFFIC = [tick(50, 1, ms=60), tick(40, 1, ms=56), tick(30, 4, ms=80), tick(20, 8, ms=120), tick(10, 8, ms=120)]


def test_tick_time_draws_the_median_pass_per_batch_size_and_how_often_it_ran():
    chart = read_chart(cost.tick_time_figure(summary(TRAFFIC, window_s=60)))
    packed = chart.series(cost.PACKED)
    assert packed.x == ["1", "4", "8"] and packed.y == [58, 80, 120]
    assert [c[0] for c in packed.customdata] == [2, 1, 2]  # 2 passes each at 1 and 8, one at 4 (in its hover)
    assert chart.title == "The decode roofline, from this server's own traffic"
    assert term("roofline") in cost.TITLE  # the lesson's word, explained where it first appears on the tab
    assert chart.sub == "8 students: 15 ms per token · alone: 58 ms per token"
    html = cost.tick_time_figure(summary(TRAFFIC, window_s=60))
    assert "students in one forward pass" in html and "time of the pass (ms)" in html


def test_one_after_another_is_a_dash_at_batch_size_times_a_one_student_pass():
    chart = read_chart(cost.tick_time_figure(summary(TRAFFIC, window_s=60), solo_ms=999))
    line = chart.series("one after another: students × 58 ms")  # the measured 1-row pass wins over solo_ms
    assert line.x == [str(r) for r in range(1, 9)] and line.y == [58 * r for r in range(1, 9)]


def test_one_after_another_falls_back_to_solo_ms_and_is_omitted_without_either():
    crowded = summary([tick(20, 4, ms=80), tick(10, 8, ms=120)], window_s=60)
    chart = read_chart(cost.tick_time_figure(crowded, solo_ms=50))
    assert chart.series("one after another: students × 50 ms").y[-1] == 400
    chart = read_chart(cost.tick_time_figure(crowded))
    assert chart.names == [cost.PACKED] and chart.sub == "8 students: 15 ms per token"


def test_a_class_of_one_reads_as_one_student():
    chart = read_chart(cost.tick_time_figure({"median_ms_by_rows": {1: 138.0}, "rows_histogram": {1: 4}}))
    assert chart.sub == "1 student: 138 ms per token" and chart.labels == ["1"]


def test_tick_time_without_traffic_is_the_empty_state():
    drawn = cost.tick_time_figure(summary([], window_s=60))
    assert not read_chart(drawn).data and "No traffic yet" in drawn


# --- what the numbers say ---


def test_traffic_html_reads_the_summary_the_saving_and_the_noise():
    s = dict(
        ticks=412,
        window_s=60,
        decode_tokens=1860,
        prefill_tokens=0,
        tokens_per_s=31.0,
        busy=0.64,
        rows_histogram={1: 10, 8: 402},
        median_ms_by_rows={1: 58.0, 8: 120.0},
        mean_rows=5.3,
    )
    assert vis.traffic_html(s, NOISE) == (
        "<p>In the last 60 s: 412 forward passes, 5.3 students per pass on average, 31 tokens/s for the whole server; "
        "the model was busy 64% of the time. "
        "One pass for 8 students took 120 ms; one after another they would have taken 8 × 58 = 464 ms: "
        "the shared pass took 26% of that (74% saved) (each time the median of the last 60 s). "
        f"Batched logits differ from a solo pass by up to {term('batching noise', '0.000043')} (float32, measured on "
        "this server at start): a step whose top-two gap is within twice that could have picked the other token.</p>"
    )


def test_the_verdict_says_what_the_measured_pair_shows_even_when_sharing_saved_nothing():
    assert vis.shared_verdict(90, 100) == "the shared pass took 90% of that (10% saved)"
    assert vis.shared_verdict(110, 100) == "the shared pass took 110% of that: sharing saved nothing in this window"


def test_frozen_traffic_says_so_first_and_names_its_window_as_the_one_before_stop():
    s = summary([tick(5, 1, ms=58), tick(6, 8, ms=120)], window_s=60)
    text = vis.traffic_html(s, None, frozen=True)
    assert text.startswith(
        "<p><b>Frozen at Stop:</b> the 60 s before it (tick Live to follow the traffic again). In those 60 s: 2 forward"
    )
    assert "(each time the median of those 60 s)." in text and "the last 60 s" not in text


def test_traffic_html_leaves_out_what_it_cannot_say():
    s = summary([tick(5, 8, ms=120)], window_s=60)  # no 1-student pass to compare with, no noise measured
    assert vis.traffic_html(s, None) == (
        "<p>In the last 60 s: 1 forward pass, 8.0 students per pass on average, 0.1 tokens/s for the whole server; "
        "the model was busy 0% of the time.</p>"
    )


def test_traffic_html_without_traffic_still_tells_the_noise_and_who_holds_the_model():
    text = vis.traffic_html(summary([], window_s=60), Noise(0.0, 3, "float32"), "Beam search has the model.")
    assert text == (
        "<p>No forward passes in the last 60 s. Batched logits are bit-identical to a solo pass (float32, measured on "
        "this server at start): sharing a pass cannot change a pick here. Beam search has the model.</p>"
    )


# --- one step's pass ---


def test_pass_caption_says_how_the_pass_ran():
    assert vis.pass_caption(7, 41.2, "packed", 4.3e-05) == "computed with 6 other sessions: batch 7, 41 ms"
    assert vis.pass_caption(2, 38, "packed", 4.3e-05) == "computed with 1 other session: batch 2, 38 ms"
    assert vis.pass_caption(1, 35, "solo", None) == "computed alone (nobody else was stepping): 35 ms"
    alone = f"computed alone, as you asked: {term('bit-exact with generate()')}, 35 ms"
    assert vis.pass_caption(1, 35, "alone", None) == alone
    lens = vis.pass_caption(1, 120, "lens", None)
    assert lens.startswith("the lens pass") and lens.endswith("every layer's hidden state: 120 ms")
    with pytest.raises(ValueError, match="'batched'"):
        vis.pass_caption(1, 35, "batched", None)


def test_pass_caption_warns_when_the_gap_is_within_twice_the_noise_boundary_included():
    noise = 1.5e-05
    at_boundary = vis.pass_caption(7, 41, "packed", noise, gap=2 * noise)
    assert at_boundary == (
        "computed with 6 other sessions: batch 7, 41 ms — the top two were 0.00003 apart, within the batching noise: "
        "a batchmate could have flipped this pick"
    )
    assert vis.pass_caption(7, 41, "packed", noise, gap=2 * noise + 1e-9) == (
        "computed with 6 other sessions: batch 7, 41 ms"
    )
    # alone or solo, nobody shared the pass: nothing to warn about whatever the gap
    assert "flipped" not in vis.pass_caption(1, 35, "solo", noise, gap=0.0)
    assert "flipped" not in vis.pass_caption(1, 35, "alone", noise, gap=0.0)


def test_a_static_runs_step_says_which_static_step_ran_and_no_batchmate():
    assert vis.pass_caption(1, 35, "solo", None) == vis.pass_caption(1, 35, "solo", None, kind="eager")
    static = vis.pass_caption(1, 35, "solo", 1e-5, gap=0.0, kind="static")
    assert static == f"computed alone by the {term('static cache')}'s step, uncaptured: 35 ms"
    captured = vis.pass_caption(1, 3.2, "solo", None, kind="captured")
    assert captured.endswith(f"replayed as a {term('CUDA graph')}: 3.2 ms")
    with pytest.raises(ValueError, match="'dynamic'"):
        vis.pass_caption(1, 35, "solo", None, kind="dynamic")


def test_a_cached_prompt_and_a_shared_start_say_what_the_prefix_cache_did():
    cached = vis.pass_caption(1, 0.4, "cached", 0.0)
    assert "not computed" in cached and "logits its first computation got" in cached and "0.4 ms" in cached
    assert "prefix cache" in cached
    partial = vis.pass_caption(3, 50.0, "prefix", 2e-5, gap=1e-5)
    assert "with 2 others" in partial and "float noise" in partial and "could have flipped" in partial
    assert "could have flipped" not in vis.pass_caption(1, 50.0, "prefix", 2e-5, gap=1.0)


def _blocks(hashes, copied, tokens):
    from decoding.serving.prefix import SessionBlocks

    lengths = [16] * (len(hashes) - 1) + [6]
    return SessionBlocks(hashes, lengths, copied, [True] * len(hashes), tokens)


def test_each_session_is_a_row_of_its_blocks_shared_or_its_own_with_short_hashes():
    chart = read_chart(
        blocks.blocks_figure(
            [
                _blocks(["aaaaaaaa11", "bbbbbbbb22", "cccccc33"], 0, 45),
                _blocks(["aaaaaaaa11", "bbbbbbbb22", "cccccc33"], 3, 38),
            ]
        )
    )
    shared, own = chart.series(blocks.SHARED), chart.series(blocks.COMPUTED)
    assert [c[1] for c in shared.customdata] == ["aaaaaa", "bbbbbb", "cccccc"]  # each block's short hash
    assert [c[1] for c in own.customdata] == ["aaaaaa", "bbbbbb", "cccccc"]
    assert shared.looks[0] != own.looks[0]  # a copy reads apart from a block computed here without its colour
    generated = chart.series(blocks.GENERATED)
    assert generated.y == [7] and [c[0] for c in generated.customdata] == [38]  # 7 tokens after its 38
    assert "No session holds a cache" in blocks.blocks_figure([])


def test_prefix_html_says_what_was_not_computed_and_what_the_copies_cost():
    from decoding.serving.prefix import PrefixStats

    stats = PrefixStats(
        prompts=4,
        prompts_hit=3,
        prompt_tokens=160,
        reused_tokens=120,
        blocks=3,
        pool_bytes=2 * 2**20,
        copy_ms=3.0,
        copied_blocks=9,
        evicted=0,
        session_bytes=8 * 2**20,
        block_table_bytes=3 * 2**20,
    )
    text = vis.prefix_html(stats, 3e-5)
    assert "75% of prompt tokens" in text and "120 prompt tokens not computed" in text
    assert "holds 10.0 MiB, against 8.0 MiB without prefix caching" in text and "would hold 3.0 MiB" in text
    assert "0.3 ms" in text and "0.00003" in text
    assert "no prompt has asked it yet" in vis.prefix_html(None, None)


def test_a_replica_of_a_lecture_hall_names_itself_in_its_traffic_and_under_each_step():
    from ui.context import this_server

    assert this_server("") == "" and this_server("2/4") == "this server, 2 of 4"
    said = vis.traffic_html({"window_s": 60, "ticks": 0}, None, server=this_server("2/4"))
    assert said.startswith("<p><b>This server, 2 of 4</b>: its own traffic")
    assert "No forward passes" in vis.traffic_html({"window_s": 60, "ticks": 0}, None)  # one process: as before
    caption = vis.pass_caption(1, 12.0, "solo", None, server="this server, 2 of 4")
    assert caption.endswith(" · on this server, 2 of 4") and caption.startswith("computed alone")
