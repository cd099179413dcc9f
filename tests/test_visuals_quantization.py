"""The quantization figures and tables are pure functions of plain rows: what they draw, and what they say."""

from visuals import quantization as q
from visuals import quantization_measured as m

ROWS = [
    dict(name="float32", kernel="F.linear", simulated=False, bytes=538e6, decode_ms=70.0, prefill_ms=300.0),
    dict(
        name="int8",
        kernel="simulated: rounded weights, float32 compute",
        simulated=True,
        bytes=135e6,
        decode_ms=71.0,
        prefill_ms=301.0,
    ),
    dict(
        name="int8-activations",
        kernel="fbgemm quantized.linear_dynamic",
        simulated=False,
        bytes=135e6,
        decode_ms=40.0,
        prefill_ms=150.0,
    ),
]


def test_both_distributions_are_drawn_over_the_same_tokens():
    fig = q.distributions_figure(["a", " b", "a"], [0.5, 0.3, 0.1], [0.4, 0.4, 0.1], "int8", 3)
    ref, fmt = fig.data
    assert list(ref.x) == list(fmt.x) and len(set(ref.x)) == 3  # two tokens that read alike stay two bars
    assert list(ref.y) == [0.5, 0.3, 0.1] and fmt.name == "int8"


def test_the_kl_chart_marks_changed_steps_and_the_divergence():
    fig = q.kl_figure([0.01, 0.2, 0.0], [True, False, True], 1)
    assert fig.data[0].marker.color[1] == q.DIVERGED and fig.data[0].marker.color[0] != q.DIVERGED
    assert fig.layout.shapes[0].x0 == 2


def test_the_streams_outline_the_first_divergence_on_both_rows():
    html = q.streams_html(["The", " sea"], ["In", " the"], 0, "int4")
    assert html.count("q-split") == 2 and html.count("q-after") == 2 and "␣sea" in html


def test_the_speed_chart_draws_simulated_formats_hollow_beside_float32s_bandwidth():
    fig = m.speed_figure(ROWS, "cpu")
    line, real, simulated = fig.data
    assert "GB/s" in line.name and list(simulated.text) == ["int8"] and simulated.marker.symbol == "circle-open"
    assert "no speed-up" in simulated.name and list(real.text) == ["float32", "int8-activations"]


def test_the_text_says_which_phase_gained_from_the_numbers():
    said = m.gained(ROWS, 256)
    assert "int8-activations" in said and "prefill gained more" in said and "int8 (" not in said
    faster_decode = [ROWS[0], {**ROWS[2], "decode_ms": 20.0}]
    assert "decode gained more" in m.gained(faster_decode, 256)
    assert "simulated" in m.gained(ROWS[:2], 256)


def test_the_tables_show_each_format_and_llama_cpps_deltas_are_cited():
    assert "simulated: no speed-up claimed" in m.speed_table(ROWS)
    rows = [
        dict(name="float32", perplexity=30.0, kl_mean=0.0, top1_agreement=1.0, positions=255),
        dict(name="int8", perplexity=30.5, kl_mean=0.004, top1_agreement=0.955, positions=255),
    ]
    table = m.quality_table(rows)
    assert "+0.500" in table and "95.5%" in table
    note = m.llama_cpp_note()
    assert "Q4_1 +0.1585" in note and "quantize.cpp" in note
