"""The continuous-batching lesson's figures and sentences, from hand-made ticks, summaries and noise."""

import pytest

from decoding.serving.scheduler import Noise
from decoding.serving.traffic import Tick, summary
from visuals.glossary import term
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


def trace(fig, name):
    return next(t for t in fig.data if (t.name or "").startswith(name))


def names(fig):
    return [t.name for t in fig.data]


def annotation_texts(fig):
    return [a.text for a in fig.layout.annotations]


# --- the ticks over time ---


def test_no_ticks_draw_the_empty_state_that_says_how_to_make_traffic():
    for ticks in ([], [tick(500, 4)]):  # nothing, or nothing in the last two minutes
        fig = vis.ticks_figure(ticks, NOW)
        assert not fig.data
        assert annotation_texts(fig) == [vis.NO_TRAFFIC]
        assert "open simulated students above" in vis.NO_TRAFFIC  # the controls sit above the charts


def test_each_pass_is_a_bar_of_its_students_split_into_decoding_and_prompt_reading():
    ticks = [tick(10, 30, ms=240), tick(5, 5, ms=300, decode=4, prefill=64), tick(1, 1, ms=35, mode="solo")]
    fig = vis.ticks_figure(ticks, NOW)
    decoding, prompts = trace(fig, "decoding one token"), trace(fig, "reading its prompt")
    assert list(decoding.y) == [30, 4, 1]
    assert list(prompts.y) == [0, 1, 0]
    # each bar ends when its pass ended, seconds before now
    assert [x + w / 2 for x, w in zip(decoding.x, decoding.width)] == pytest.approx([-10, -5, -1])
    assert list(decoding.width) == pytest.approx([0.4, 0.4, 0.4])  # short passes still show
    assert fig.layout.barmode == "stack"
    chunks = trace(fig, "prompt tokens (right axis)")
    assert list(chunks.y) == [64] and chunks.yaxis == "y2"
    assert fig.layout.yaxis2.title.text == "prompt tokens"
    assert fig.layout.xaxis.title.text == "seconds before now" and list(fig.layout.xaxis.range) == [-120, 0]
    assert fig.layout.yaxis.title.text == "students"
    assert fig.layout.title.text == "Each forward pass: how many students shared it"


def test_without_prefill_there_is_no_prompt_token_axis():
    fig = vis.ticks_figure([tick(3, 8), tick(2, 8)], NOW)
    assert names(fig) == ["decoding one token", "reading its prompt"]
    assert "yaxis2" not in fig.layout.to_plotly_json()


def test_ticks_older_than_the_window_are_left_out():
    fig = vis.ticks_figure([tick(200, 9), tick(60, 3)], NOW)
    assert list(trace(fig, "decoding one token").y) == [3]


# --- tick time against batch size ---

TRAFFIC = [tick(50, 1, ms=60), tick(40, 1, ms=56), tick(30, 4, ms=80), tick(20, 8, ms=120), tick(10, 8, ms=120)]


def test_tick_time_plots_the_median_pass_per_batch_size_sized_by_how_often_it_ran():
    fig = vis.tick_time_figure(summary(TRAFFIC, window_s=60))
    packed = trace(fig, "one packed pass")
    assert list(packed.x) == [1, 4, 8] and list(packed.y) == [58, 80, 120]
    small, _, big = packed.marker.size
    assert small == big > packed.marker.size[1]  # 2 passes each at 1 and 8, one at 4
    assert fig.layout.xaxis.title.text == "students in one forward pass"
    assert fig.layout.yaxis.title.text == "time of the pass (ms)"
    assert fig.layout.title.text == "The decode roofline, from this server's own traffic"
    assert annotation_texts(fig) == ["8 students: 15 ms per token<br>alone: 58 ms per token"]
    note = fig.layout.annotations[0]  # in the top-left corner, where neither line runs (both start low on the left)
    assert (note.xref, note.yref, note.x, note.y, note.showarrow) == ("paper", "paper", 0.02, 0.98, False)


def test_one_after_another_line_is_batch_size_times_a_one_student_pass():
    fig = vis.tick_time_figure(summary(TRAFFIC, window_s=60), solo_ms=999)
    line = trace(fig, "one after another")
    assert list(line.x) == [1, 8] and list(line.y) == [58, 8 * 58]  # the measured 1-row pass wins over solo_ms
    assert line.name == "one after another: students × 58 ms"


def test_one_after_another_line_falls_back_to_solo_ms_and_is_omitted_without_either():
    crowded = summary([tick(20, 4, ms=80), tick(10, 8, ms=120)], window_s=60)
    assert list(trace(vis.tick_time_figure(crowded, solo_ms=50), "one after another").y) == [50, 400]
    fig = vis.tick_time_figure(crowded)
    assert names(fig) == ["one packed pass (median)"]
    assert annotation_texts(fig) == ["8 students: 15 ms per token"]


def test_a_class_of_one_reads_as_one_student_on_whole_student_ticks():
    fig = vis.tick_time_figure({"median_ms_by_rows": {1: 138.0}, "rows_histogram": {1: 4}})
    assert annotation_texts(fig) == ["1 student: 138 ms per token"]
    assert fig.layout.xaxis.dtick == 1


def test_tick_time_without_traffic_is_the_empty_state():
    fig = vis.tick_time_figure(summary([], window_s=60))
    assert not fig.data and "No traffic yet" in annotation_texts(fig)[0]


# --- what the numbers say ---


def test_traffic_markdown_reads_the_summary_the_saving_and_the_noise():
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
    assert vis.traffic_markdown(s, NOISE) == (
        "In the last 60 s: 412 forward passes, 5.3 students per pass on average, 31 tokens/s for the whole server; "
        "the model was busy 64% of the time. "
        "One pass for 8 students took 120 ms; one after another they would have taken 8 × 58 = 464 ms: "
        "the shared pass took 26% of that (74% saved). "
        f"Batched logits differ from a solo pass by up to {term('batching noise', '0.000043')} (float32, measured on "
        "this server at start): a step whose top-two gap is within twice that could have picked the other token."
    )


def test_the_verdict_says_what_the_measured_pair_shows_even_when_sharing_saved_nothing():
    assert vis.shared_verdict(90, 100) == "the shared pass took 90% of that (10% saved)"
    assert vis.shared_verdict(110, 100) == "the shared pass took 110% of that: sharing saved nothing in this window"


def test_traffic_markdown_leaves_out_what_it_cannot_say():
    s = summary([tick(5, 8, ms=120)], window_s=60)  # no 1-student pass to compare with, no noise measured
    assert vis.traffic_markdown(s, None) == (
        "In the last 60 s: 1 forward pass, 8.0 students per pass on average, 0.1 tokens/s for the whole server; "
        "the model was busy 0% of the time."
    )


def test_traffic_markdown_without_traffic_still_tells_the_noise_and_who_holds_the_model():
    text = vis.traffic_markdown(summary([], window_s=60), Noise(0.0, 3, "float32"), "Beam search has the model.")
    assert text == (
        "No forward passes in the last 60 s. Batched logits are bit-identical to a solo pass (float32, measured on "
        "this server at start): sharing a pass cannot change a pick here.\n\nBeam search has the model."
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
    assert static == "computed alone by the static cache's step, uncaptured: 35 ms"
    assert vis.pass_caption(1, 3.2, "solo", None, kind="captured").endswith("replayed as a CUDA graph: 3.2 ms")
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
    fig = vis.blocks_figure(
        [
            _blocks(["aaaaaaaa11", "bbbbbbbb22", "cccccc33"], 0, 45),
            _blocks(["aaaaaaaa11", "bbbbbbbb22", "cccccc33"], 3, 38),
        ]
    )
    drawn = {t.name: t for t in fig.data}
    assert list(drawn["copied from the pool (shared)"].text) == ["aaaaaa", "bbbbbb", "cccccc"]
    assert list(drawn["computed by this session"].text) == ["aaaaaa", "bbbbbb", "cccccc"]
    assert list(drawn["generated"].x) == [7] and list(drawn["generated"].base) == [38]
    assert "No session holds a cache" in vis.blocks_figure([]).to_json()


def test_prefix_markdown_says_what_was_not_computed_and_what_the_copies_cost():
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
    text = vis.prefix_markdown(stats, 3e-5)
    assert "75% of prompt tokens" in text and "120 prompt tokens not computed" in text
    assert "holds 10.0 MiB, against 8.0 MiB without prefix caching" in text and "would hold 3.0 MiB" in text
    assert "0.3 ms" in text and "0.00003" in text
    assert "no prompt has asked it yet" in vis.prefix_markdown(None, None)
