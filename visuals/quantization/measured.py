"""Each weight format measured: bytes per decode step against ms per token (float32's bandwidth as the line a format
would sit on if its kernel streamed its bytes as fast), the table of times, what gained, and quality on the held-out
text beside llama.cpp's published perplexity deltas. Pure functions of plain rows (dicts); no torch, no gradio.

A speed row: name, kernel, simulated, bytes, decode_ms, prefill_ms (medians), decode_runs_ms, prefill_runs_ms (each
repeat's). A quality row: name, part, perplexity, kl_mean,
top1_agreement, positions.

A simulated format stores its bytes but reads float32's here, so its time is float32's: its ratios are left out
rather than shown as a gain or a loss, and a real kernel's ratio within the run's own `noise` of 1 is said to be noise.
"""

import statistics

from visuals.glossary import TERMS, term
from visuals.machine import beside_machine, device_label
from visuals.quantization.side_by_side import LLAMA_CPP, LLAMA_CPP_SOURCE, REFERENCE
from visuals.theme import CHOSEN, DECODE, FONT_SIZE, OTHER, empty_figure, figure_from, ink, look

MB = 1e6


def speed_figure(rows: list[dict], label: str):
    """Decode ms/token against weight MB per step; the dotted line is float32's measured bytes per ms through 0:
    the rate float32's decode streamed its weights at (not the machine's copy bandwidth, see `streamed`)."""
    base = next((r for r in rows if r["name"] == REFERENCE), None)
    if base is None:
        return empty_figure("Press Measure:<br>each format's bytes per step<br>and ms per token appear here", 360)
    gbs = decode_gbs(base)
    top = max(r["bytes"] for r in rows) / MB * 1.1
    data = [
        {
            "x": [0, top],
            "y": [0, top * MB / (gbs * 1e6)],
            "mode": "lines",
            "line": {"color": OTHER, "dash": "dot"},
            "name": f"float32 decode streamed its weights at {gbs:.1f} GB/s",
            "hoverinfo": "skip",
        }
    ]
    for simulated, colour, symbol in ((False, DECODE, "circle"), (True, CHOSEN, "circle-open")):
        mine = [r for r in rows if bool(r["simulated"]) == simulated]
        if mine:
            data.append(_points(mine, colour, symbol, simulated))
    # two lines, as theme.measured_title writes them: on one, the device's long name ran past a narrow chart
    device = device_label(label)  # a cloud machine's 80-character CPU name would run past the chart's edge
    layout = look(f"Decode, per format<br><span style='font-size:{FONT_SIZE - 2}px'>{device}</span>", 380)
    layout["margin"] = {**layout["margin"], "t": 80}
    layout["xaxis"] = {
        **layout["xaxis"],
        "title": "weight MB per decode step, as the format stores them",
        "rangemode": "tozero",
    }
    layout["yaxis"] = {**layout["yaxis"], "title": "ms per token", "rangemode": "tozero"}
    layout["legend"] = {**layout["legend"], "y": -0.25}
    return figure_from(data, layout)


def decode_gbs(row: dict) -> float:
    """The rate a format's decode step streamed its weights: bytes per step ÷ ms per token (bytes per ms = GB/s/1e6)."""
    return row["bytes"] / row["decode_ms"] / 1e6


def streamed(rows: list[dict], machine_gbs: float | None) -> str:
    """What the dotted line is, and why it is not the machine's figure: float32's weight bytes per decode step ÷ its
    ms per token, beside this machine's copy bandwidth (`machine_gbs`, the server's kept figure; None: not measured
    yet on this server)."""
    base = next(r for r in rows if r["name"] == REFERENCE)
    gbs = decode_gbs(base)
    said = (
        f"The dotted line: **float32 decode streamed its weights at {gbs:.1f} GB/s** ({base['bytes'] / MB:.0f} MB per "
        f"step ÷ {base['decode_ms']:.1f} ms per token), {beside_machine(gbs, machine_gbs)}. A decode step does more "
        "than read its weights (attention, norms, Python between operators)"
    )
    if machine_gbs and gbs < machine_gbs:
        return said + ", so it streams them slower than a plain copy moves bytes."
    if machine_gbs:
        return said + ", yet it streamed them as fast as the copy: the machine was busier when the copy was probed."
    return said + "."


def _points(rows: list[dict], colour: str, symbol: str, simulated: bool) -> dict:
    return {
        "x": [r["bytes"] / MB for r in rows],
        "y": [r["decode_ms"] for r in rows],
        "mode": "markers+text",
        "marker": {"color": colour, "size": 13, "symbol": symbol, "line": {"width": 2, "color": colour}},
        "text": [r["name"] for r in rows],
        "textposition": "top center",
        "textfont": {"color": ink(colour), "size": 13},
        "name": "simulated: no speed-up (reads float32's bytes)" if simulated else "a real kernel (float32: F.linear)",
        "customdata": [_runs(r) for r in rows],
        "hovertemplate": "%{text}: stores %{x:.0f} MB, %{y:.1f} ms/token<br>%{customdata}<extra></extra>",
    }


def _runs(row: dict) -> str:
    return "simulated: reads float32's bytes, no speed-up claimed" if row["simulated"] else row["kernel"]


def speed_table(rows: list[dict]) -> str:
    base = next(r for r in rows if r["name"] == REFERENCE)
    spread = noise(rows)
    lines = [
        "| format | runs as | MB stored | MB read here | decode ms/token | decode × float32 | prefill ms "
        "| prefill × float32 |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        read = base["bytes"] if r["simulated"] else r["bytes"]
        lines.append(
            f"| {r['name']} | {_runs(r)} | {r['bytes'] / MB:.0f} | {read / MB:.0f} | {r['decode_ms']:.1f} | "
            f"{_ratio(base['decode_ms'], r, spread)} | {r['prefill_ms']:.0f} | "
            f"{_ratio(base['prefill_ms'], r, spread, 'prefill')} |"
        )
    note = (
        f"*× float32 is left out (–) for a simulated format, which does float32's work; a ratio within {spread:.0%} "
        "of 1 is noise (≈1): the widest spread between one format's turns in this measurement.*"
    )
    return "\n".join(lines) + "\n\n" + note


def noise(rows: list[dict]) -> float:
    """The noise between turns of the same work, measured here: the widest spread, (max − min) / median, of any
    format's repeated decode or prefill times. A ratio to float32 closer to 1 than this is not a gain."""
    runs = [r[f"{phase}_runs_ms"] for r in rows for phase in ("decode", "prefill")]
    return max((max(ms) - min(ms)) / statistics.median(ms) for ms in runs)


def _ratio(base_ms: float, row: dict, spread: float, phase: str = "decode") -> str:
    """float32's time over the row's: '–' for a simulated format, '≈1' within the noise, else the ratio."""
    if row["name"] == REFERENCE:
        return "1"
    if row["simulated"]:
        return "–"
    ratio = base_ms / row[f"{phase}_ms"]
    return "≈1" if abs(ratio - 1) <= spread else f"{ratio:.2f}"


def gained(rows: list[dict], prefill_tokens: int) -> str:
    """Which of decode and prefill gained the byte ratio, per format with a real kernel, from the measured rows."""
    base = next(r for r in rows if r["name"] == REFERENCE)
    real = [r for r in rows if not r["simulated"] and r["name"] != REFERENCE]
    if not real:
        return (
            "Every format measured here is **simulated** (rounded weights, float32 compute): they read float32's bytes "
            "and do float32's work, so no speed-up is claimed; their times differ from float32's only by noise."
        )
    said = []
    for r in real:
        ratio = base["bytes"] / r["bytes"]
        decode, prefill = base["decode_ms"] / r["decode_ms"], base["prefill_ms"] / r["prefill_ms"]
        winner = "decode" if decode >= prefill else "prefill"
        said.append(
            f"**{r['name']}** ({r['kernel']}) reads {ratio:.1f}× fewer bytes: decode ran **{decode:.2f}×** as fast as "
            f"float32, a prefill of {prefill_tokens} tokens **{prefill:.2f}×**, so **{winner} gained more**. "
            + _why(r["name"], winner, decode, prefill, ratio)
        )
    return "\n\n".join(said)


def _why(name: str, winner: str, decode: float, prefill: float, ratio: float) -> str:
    short = (
        f"Decode reached {decode / ratio:.0%} of the byte ratio: turning each stored weight into the type the "
        "arithmetic runs in costs time per weight that a float32 GEMV does not spend. "
    )
    if winner == "prefill":
        return short + (
            "The references predict the opposite (decode gains the byte ratio, compute-bound prefill barely gains): "
            f"on this CPU the kernel's {name} arithmetic is faster than float32's, so prefill gains too."
        )
    short += "As the references predict: decode is bound by the bytes it reads, prefill by arithmetic."
    if prefill < 1:
        short += (
            f" Here prefill even ran {1 / prefill:.1f}× slower: this CPU computes in {name} slower than in float32."
        )
    return short


def quality_table(rows: list[dict]) -> str:
    """A row per format and part rounded; float32 (the reference) first."""
    lines = [
        "| format | rounded | perplexity | Δ perplexity | mean KL vs float32 | top-1 agreement |",
        "|---|---|---:|---:|---:|---:|",
    ]
    base = next((r["perplexity"] for r in rows if r["name"] == REFERENCE), None)
    for r in rows:
        delta = f"{r['perplexity'] - base:+.3f}" if base is not None else "–"
        part = "–" if r["name"] == REFERENCE else r.get("part", "layers and head")
        lines.append(
            f"| {r['name']} | {part} | {r['perplexity']:.3f} | {delta} | {_kl(r['kl_mean'])} | "
            f"{r['top1_agreement']:.1%} |"
        )
    return "\n".join(lines)


def _kl(kl: float) -> str:
    """Four decimals; a KL too small for them but not 0 is shown as it is, not as a rounded 0.0000."""
    return f"{kl:.4f}" if kl == 0 or kl >= 5e-5 else f"{kl:.0e}"


def nothing_to_score(formats_label: str, parts_label: str) -> str:
    return f"*Nothing to score: tick at least one box under **{formats_label}** and one under **{parts_label}**.*"


def llama_cpp_note() -> str:
    deltas = ", ".join(f"{term(name) if name in TERMS else name} {delta:+.4f}" for name, delta in LLAMA_CPP)
    return (
        f"*For context, not measured here:* llama.cpp's quantize tool lists what each format adds to perplexity on "
        f"LLaMA-v1-7B ({term('wikitext-2')}, float16 ≈ 5.9): {deltas} ([`QUANT_OPTIONS`]({LLAMA_CPP_SOURCE})). "
        "Here the layers are Q4_1 already: the one tensor int4 hurts is the LM head."
    )
