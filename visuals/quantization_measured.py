"""Each weight format measured: bytes per decode step against ms per token (float32's bandwidth as the line a format
would sit on if its kernel streamed its bytes as fast), the table of times, what gained, and quality on the held-out
text beside llama.cpp's published perplexity deltas. Pure functions of plain rows (dicts); no torch, no gradio.

A speed row: name, kernel, simulated, bytes, decode_ms, prefill_ms. A quality row: name, perplexity, kl_mean,
top1_agreement, positions.
"""

from visuals.quantization import LLAMA_CPP, LLAMA_CPP_SOURCE, REFERENCE
from visuals.theme import CHOSEN, DECODE, OTHER, empty_figure, figure_from, ink, look

MB = 1e6


def speed_figure(rows: list[dict], label: str):
    """Decode ms/token against weight MB per step; the dotted line is float32's measured bytes per ms through 0."""
    base = next((r for r in rows if r["name"] == REFERENCE), None)
    if base is None:
        return empty_figure("Press Measure:<br>each format's bytes per step<br>and ms per token appear here", 360)
    gbs = base["bytes"] / base["decode_ms"] / 1e6  # bytes per ms -> GB/s
    top = max(r["bytes"] for r in rows) / MB * 1.1
    data = [
        {
            "x": [0, top],
            "y": [0, top * MB / (gbs * 1e6)],
            "mode": "lines",
            "line": {"color": OTHER, "dash": "dot"},
            "name": f"float32's bandwidth: {gbs:.1f} GB/s",
            "hoverinfo": "skip",
        }
    ]
    for simulated, colour, symbol in ((False, DECODE, "circle"), (True, CHOSEN, "circle-open")):
        mine = [r for r in rows if bool(r["simulated"]) == simulated]
        if mine:
            data.append(_points(mine, colour, symbol, simulated))
    layout = look(f"Decode, per format · {label}", 360)
    layout["xaxis"] = {**layout["xaxis"], "title": "weight MB read per decode step", "rangemode": "tozero"}
    layout["yaxis"] = {**layout["yaxis"], "title": "ms per token", "rangemode": "tozero"}
    layout["legend"] = {**layout["legend"], "y": -0.25}
    return figure_from(data, layout)


def _points(rows: list[dict], colour: str, symbol: str, simulated: bool) -> dict:
    return {
        "x": [r["bytes"] / MB for r in rows],
        "y": [r["decode_ms"] for r in rows],
        "mode": "markers+text",
        "marker": {"color": colour, "size": 13, "symbol": symbol, "line": {"width": 2, "color": colour}},
        "text": [r["name"] for r in rows],
        "textposition": "top center",
        "textfont": {"color": ink(colour), "size": 13},
        "name": "simulated: no speed-up claimed" if simulated else "a real kernel (float32: F.linear)",
        "customdata": [r["kernel"] for r in rows],
        "hovertemplate": "%{text}: %{x:.0f} MB, %{y:.1f} ms/token<br>%{customdata}<extra></extra>",
    }


def speed_table(rows: list[dict]) -> str:
    base = next(r for r in rows if r["name"] == REFERENCE)
    lines = [
        "| format | runs as | MB per step | decode ms/token | decode × float32 | prefill ms | prefill × float32 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        runs = "simulated: no speed-up claimed" if r["simulated"] else r["kernel"]
        decode, prefill = base["decode_ms"] / r["decode_ms"], base["prefill_ms"] / r["prefill_ms"]
        lines.append(
            f"| {r['name']} | {runs} | {r['bytes'] / MB:.0f} | {r['decode_ms']:.1f} | {decode:.2f} | "
            f"{r['prefill_ms']:.0f} | {prefill:.2f} |"
        )
    return "\n".join(lines)


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
    lines = [
        "| format | perplexity | Δ perplexity | mean KL vs float32 | top-1 agreement |",
        "|---|---:|---:|---:|---:|",
    ]
    base = next((r["perplexity"] for r in rows if r["name"] == REFERENCE), None)
    for r in rows:
        delta = f"{r['perplexity'] - base:+.3f}" if base is not None else "–"
        lines.append(
            f"| {r['name']} | {r['perplexity']:.3f} | {delta} | {r['kl_mean']:.4f} | {r['top1_agreement']:.1%} |"
        )
    return "\n".join(lines)


def llama_cpp_note() -> str:
    deltas = ", ".join(f"{name} {delta:+.4f}" for name, delta in LLAMA_CPP)
    return (
        f"*For context, not measured here:* llama.cpp's quantize tool lists what each format "
        f"adds to perplexity on LLaMA-v1-7B (wikitext-2, float16 ≈ 5.9): {deltas} "
        f"([`QUANT_OPTIONS`]({LLAMA_CPP_SOURCE})). A 135M model already rounded to Q4_1 once has far less room."
    )
