"""The quantization lesson's figures and tables: two distributions side by side, KL along the run, the two token
streams with their first greedy divergence, and each format's bytes, time and quality.

Pure functions of plain data (decoding.quantization's records as lists and numbers); colours from visuals.theme:
the reference in KEPT's blue, the format in CHOSEN's orange, a simulated format drawn hollow.
"""

import html

from decoding.stages import TOP_K
from visuals.glossary import term
from visuals.theme import CHOSEN, KEPT, OTHER, REMOVED, TEXT, empty_figure, figure_from, ink, look
from visuals.tokens import visible_token
from visuals.words import count

REFERENCE = "float32"
DIVERGED = REMOVED[TOP_K.name]  # vermillion: where the format's own stream first wrote another token
# llama.cpp's quantize tool: what each format added to perplexity on LLaMA-v1-7B (wikitext-2, float16 ≈ 5.9)
LLAMA_CPP = (("Q8_0", 0.0004), ("Q5_1", 0.0349), ("Q4_K_M", 0.0532), ("Q4_1", 0.1585))
SMALL_GAP = 0.02  # top two closer than 2 points: a small change in the logits can swap them
HEIGHT = 270  # both step charts: under the buttons and the step's two lines at 1280x720
LLAMA_CPP_SOURCE = "https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/quantize.cpp"


def distributions_figure(tokens: list[str], p_reference: list[float], p_format: list[float], fmt: str, step: int):
    """Grouped bars: each shown token's probability under float32 and under the format, on the same context."""
    if not tokens:
        return empty_figure("Press Step:<br>both next-token distributions<br>appear here", HEIGHT)
    labels = _unique([visible_token(t) for t in tokens])
    data = [
        _bars(labels, p_reference, f"{REFERENCE} (reference)", KEPT, "solid"),
        _bars(labels, p_format, fmt, CHOSEN, "/"),
    ]
    layout = look(f"Step {step}, on float32's text", HEIGHT)
    layout.update(barmode="group", bargap=0.25, margin={"l": 55, "r": 10, "t": 40, "b": 60})
    layout["yaxis"] = {**layout["yaxis"], "title": "probability", "rangemode": "tozero"}
    layout["xaxis"] = {**layout["xaxis"], "tickangle": -30, "type": "category"}
    # in the plot's top-right corner, where the bars (most likely first) leave room: above it, beside the title, it
    # ran into the title on a narrow screen
    legend = {"y": 1, "x": 1, "xanchor": "right", "yanchor": "top"}  # transparent, as elsewhere (dark mode too)
    layout["legend"] = {**layout["legend"], **legend}
    return figure_from(data, layout)


def _bars(labels: list[str], values: list[float], name: str, colour: str, pattern: str) -> dict:
    return {
        "type": "bar",
        "x": labels,
        "y": values,
        "name": name,
        "marker": {"color": colour, "pattern": {"shape": "" if pattern == "solid" else pattern}},
        "hovertemplate": f"{html.escape(name)}: %{{y:.3f}}<extra>%{{x}}</extra>",
    }


def _unique(labels: list[str]) -> list[str]:
    """Category labels made distinct (two tokens can read the same once escaped) by a trailing zero-width mark."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label + "\u200b" * (seen[label] - 1))
    return out


def kl_figure(kls: list[float], same: list[bool], divergence: int | None):
    """KL(float32 || format) per step; a step where the top token changed is drawn in vermillion."""
    if not kls:
        return empty_figure("KL per step<br>appears here", HEIGHT)
    steps = list(range(1, len(kls) + 1))
    data = [
        {
            "type": "bar",
            "x": steps,
            "y": kls,
            "name": "KL per step",
            "marker": {"color": [KEPT if s else DIVERGED for s in same]},
            "customdata": ["same top-1" if s else "top-1 changed" for s in same],
            "hovertemplate": "step %{x}: KL %{y:.4f} nats, %{customdata}<extra></extra>",
        }
    ]
    layout = look("KL(float32 ‖ format) per step", HEIGHT)
    layout.update(showlegend=False, margin={"l": 55, "r": 10, "t": 40, "b": 62})
    dtick = 5 if len(kls) > 10 else 1
    # the colour's key on a line of its own: on one line with "step" it ran past the chart on a narrow screen
    layout["xaxis"] = {**layout["xaxis"], "title": "step<br>vermillion: top-1 changed", "dtick": dtick}
    layout["yaxis"] = {**layout["yaxis"], "title": "nats", "rangemode": "tozero"}
    if divergence is not None:
        layout["shapes"] = [_divergence_line(divergence + 1)]
    return figure_from(data, layout)


def _divergence_line(step: int) -> dict:
    return {"type": "line", "x0": step, "x1": step, "yref": "paper", "y0": 0, "y1": 1, "line": {"dash": "dot"}}


def streams_html(reference: list[str], own: list[str], divergence: int | None, fmt: str) -> str:
    """The two greedy streams as chips, one row each; the first divergence outlined on both, later chips dashed."""
    rows = []
    for name, tokens in ((f"{REFERENCE}", reference), (fmt, own)):
        chips = (
            "".join(_chip(t, i, divergence) for i, t in enumerate(tokens)) or "<span class='quantization-none'>∅</span>"
        )
        rows.append(
            f"<div class='quantization-row'><span class='quantization-name'>{html.escape(name)}</span>{chips}</div>"
        )
    return f"<div class='quantization-streams' id='quantization-streams-body'>{''.join(rows)}</div>"


def _chip(text: str, i: int, divergence: int | None) -> str:
    after = divergence is not None and i > divergence
    cls = "quantization-chip" + (" quantization-split" if i == divergence else " quantization-after" if after else "")
    title = f"step {i + 1}" + (": the first greedy divergence" if i == divergence else "")
    return f"<span class='{cls}' title='{title}'>{html.escape(visible_token(text))}</span>"


def tally_line(same: int, steps: int, kl_mean: float) -> str:
    return f"Same top-1 at **{same} of {count(steps, 'step')}**, mean KL **{kl_mean:.4f}** nats"


def divergence_line(divergence: int | None, gap: float | None, fmt: str) -> str:
    if divergence is None:
        return f"The greedy streams have not parted: {fmt} wrote float32's tokens so far."
    apart = f"float32's top two were {gap * 100:.1f} {term('points')} apart there"
    if gap < SMALL_GAP:
        return (
            f"**First greedy divergence at step {divergence + 1}** (outlined): {apart}, so a small change swapped them."
        )
    return (
        f"**First greedy divergence at step {divergence + 1}** (outlined): {apart}, so {fmt} moved their "
        "probabilities by at least that much."
    )


CSS = f"""
.quantization-streams {{ font-family: ui-monospace, monospace; font-size: 15px; }}
.quantization-row {{ display: flex; flex-wrap: wrap; gap: 3px; align-items: center; margin: 2px 0; }}
.quantization-name {{ font-family: var(--font); font-weight: 700; min-width: 90px; color: {TEXT}; }}
.quantization-chip {{ border: 1px solid {OTHER}; border-radius: 4px; padding: 0 4px; }}
.quantization-split {{ border: 3px solid {DIVERGED}; color: {ink(DIVERGED)}; font-weight: 700; }}
.quantization-after {{ border-style: dashed; }}
#quantization-kernels table, #quantization-speed-table table, #quantization-quality table {{
  display: block; overflow-x: auto; max-width: 100%;
}}
#quantization-kernels td, #quantization-kernels th, #quantization-speed-table td, #quantization-speed-table th,
#quantization-quality td, #quantization-quality th {{
  white-space: nowrap;
}}
"""
