"""The quantization figures and tables are pure functions of plain rows: what they draw, and what they say."""

from tests.helpers.charts import read_chart
from tests.helpers.made import SPEED_ROWS
from visuals.parts import changes
from visuals.quantization import measured as m
from visuals.quantization import side_by_side as q


def test_both_distributions_are_drawn_over_the_same_tokens():
    chart = read_chart(q.distributions_figure(["a", " b", "a"], [0.5, 0.3, 0.1], [0.4, 0.4, 0.1], "int8", 3))
    ref, fmt = chart.data
    assert ref.x == fmt.x and len(set(ref.x)) == 3  # two tokens that read alike stay two bars
    assert ref.y == [0.5, 0.3, 0.1] and fmt.name == "int8"
    assert ref.looks == ["solid"] * 3 and fmt.looks == ["outline"] * 3  # the format hatched: not colour alone
    assert chart.labels == ["a", "␣b", "a"] and chart.title == "Step 3, on float32's text"


def test_the_kl_chart_marks_changed_steps_and_the_divergence():
    chart = read_chart(q.kl_figure([0.01, 0.2, 0.0], [True, False, True], 1))
    assert chart.series(q.SAME).x == ["1", "3"] and chart.series(q.CHANGED).x == ["2"]
    assert chart.series(q.CHANGED).colours == [q.DIVERGED] and chart.series(q.CHANGED).looks == ["outline"]
    assert chart.annotations == [q.DIVERGENCE]  # the dotted line, down step 2's column
    html = q.kl_figure([0.01, 0.2, 0.0], [True, False, True], 1)
    second = html.split('<div class="lc-col">')[2]
    assert "lc-rule-x" in second and "lc-dotted" in second


def test_the_streams_outline_the_first_divergence_on_both_rows():
    html = q.streams_html(["The", " sea"], ["In", " the"], 0, "int4")
    assert html.count("quantization-split") == 2 and html.count("quantization-after") == 2 and "␣sea" in html


def test_a_step_of_the_side_by_side_sends_its_words_its_distributions_its_kl_column_and_a_chip_per_stream():
    dist = q.distributions_figure(["a"], [0.5], [0.4], "int8", 1)
    one = q.step_view("step 1", dist, [0.01], [True], None, ["The"], ["The"], "int8")
    two = q.step_view("step 2", dist, [0.01, 0.02], [True, True], None, ["The", " sea"], ["The", " sea"], "int8")
    ops = changes(one, two)
    appended = {op[1]: op[2] for op in ops if op[0] == "append"}
    assert set(appended) == {
        "#quantization-kl .lc-cols",
        "#quantization-kl .lc-x",
        "#quantization-stream-0",
        "#quantization-stream-1",
    }
    assert read_chart(appended["#quantization-kl .lc-cols"]).series(q.SAME).x == ["2"]
    assert ["html", "#quantization-status", "step 2"] in ops


def test_the_speed_chart_draws_simulated_formats_hollow_beside_float32s_bandwidth():
    fig = m.speed_figure(SPEED_ROWS, "cpu")
    line, real, simulated = fig.data
    assert "GB/s" in line.name and list(simulated.text) == ["int8"] and simulated.marker.symbol == "circle-open"
    assert "no speed-up" in simulated.name and list(real.text) == ["float32", "int8-activations"]


def test_the_text_says_which_phase_gained_from_the_numbers():
    said = m.gained(SPEED_ROWS, 256)
    assert "int8-activations" in said and "prefill gained more" in said and "int8 (" not in said
    faster_decode = [SPEED_ROWS[0], {**SPEED_ROWS[2], "decode_ms": 20.0}]
    assert "decode gained more" in m.gained(faster_decode, 256)
    assert "simulated" in m.gained(SPEED_ROWS[:2], 256)


def test_the_tables_show_each_format_and_llama_cpps_deltas_are_cited():
    assert "simulated: reads float32's bytes, no speed-up claimed" in m.speed_table(SPEED_ROWS)
    rows = [
        dict(name="float32", perplexity=30.0, kl_mean=0.0, top1_agreement=1.0, positions=255),
        dict(name="int8", part="head only", perplexity=30.5, kl_mean=0.004, top1_agreement=0.955, positions=255),
    ]
    table = m.quality_table(rows)
    assert "+0.500" in table and "95.5%" in table and "| int8 | head only |" in table
    note = m.llama_cpp_note()
    assert "Q4_1</button> +0.1585" in note and "quantize.cpp" in note and "wikitext-2</button>" in note


def test_a_simulated_format_reads_float32s_bytes_and_claims_no_ratio_and_noise_is_said_as_noise():
    noisy = {**SPEED_ROWS[2], "decode_ms": 67.0}  # 1.04x: inside float32's own spread between turns (5.7%)
    table = m.speed_table([SPEED_ROWS[0], SPEED_ROWS[1], noisy])
    int8, activations = table.splitlines()[3], table.splitlines()[4]
    assert "| 135 | 538 | 71.0 | – | 301 | – |" in int8  # stores 135 MB, reads float32's 538 here
    assert "| 135 | 135 | 67.0 | ≈1 | 150 | 2.00 |" in activations
    assert "a ratio within 6% of 1 is noise" in table


def test_the_noise_is_the_widest_spread_between_one_formats_turns_in_this_measurement():
    steady = [
        {**r, "decode_runs_ms": [r["decode_ms"]] * 3, "prefill_runs_ms": [r["prefill_ms"]] * 3} for r in SPEED_ROWS
    ]
    assert m.noise(steady) == 0.0
    assert m.noise(SPEED_ROWS) == (72.0 - 68.0) / 70.0
    # the same 1.04x that was noise above is a ratio when the turns agree to the millisecond
    steady[2] = {**steady[2], "decode_ms": 67.0, "decode_runs_ms": [67.0] * 3}
    activations = m.speed_table(steady).splitlines()[4]
    assert "| 135 | 135 | 67.0 | 1.04 | 150 | 2.00 |" in activations


def test_a_kl_too_small_for_four_decimals_is_not_shown_as_zero():
    row = dict(name="as stored", part="layers and head", perplexity=30.0, kl_mean=3e-9, top1_agreement=1.0)
    assert "| 3e-09 | 100.0% |" in m.quality_table([row])


def test_a_small_change_is_said_only_where_the_top_two_were_close():
    assert "a small change swapped them" in q.divergence_line(0, 0.004, "int4")
    wide = q.divergence_line(3, 0.045, "int4")
    assert "step 4" in wide and "4.5" in wide and "small" not in wide and "int4 moved their probabilities" in wide


def test_the_file_table_shows_each_part_in_its_stored_type_beside_what_float32_reads():
    from decoding.quantization.stored import Stored, StoredKind
    from visuals.quantization import stored as files

    kinds = (
        StoredKind("layer matrices", "Q4_1", "int4 in groups of 32", 210, 32 * 1000, 20 * 1000),
        StoredKind("norms", "F32", "float32", 3, 100, 400),
    )
    out = files.stored_html(Stored("m.gguf", 30_000, kinds))
    assert "<b>m.gguf</b> holds <b>0.0 MB</b>" in out and "layer matrices (210)" in out
    assert ">Q4_1</button>" in out and "<td class='quantization-right'>5</td>" in out  # 20 bytes per 32 weights: 5 bits
    assert "all of it, as run here" in out and "as stored" in out


def test_another_model_has_no_as_stored_and_says_what_its_reference_is():
    from visuals.quantization import stored as files

    said = files.reference_html("gpt2")
    assert "<b>gpt2</b>'s weights as published, run in float32" in said and "no <b>as stored</b>" in said
