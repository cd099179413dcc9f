"""The quantization lesson's figures and tables: two distributions side by side, KL along the run, the two token
streams with their first greedy divergence, and each format's bytes, time and quality.

Pure functions of plain data (decoding.quantization's records as lists and numbers); colours from visuals.theme:
the reference in KEPT's blue, the format in CHOSEN's orange (hatched), a simulated format drawn hollow. The step's two
charts are HTML (visuals.chart), redrawn on every step of the side by side, and the step's whole view is one element
the page patches (`step_view`): a step sends its words, its distributions, its KL column and its two chips.
"""

import html

from decoding.stages import TOP_K
from visuals.chart import (
    Bar,
    Chart,
    Column,
    Key,
    Rule,
    column_html,
    empty_html,
    figure_html,
    label_html,
    lines_html,
    nice_axis,
    plot_style,
    ticks_html,
)
from visuals.glossary import term
from visuals.parts import Parts
from visuals.theme import CHOSEN, KEPT, OTHER, REMOVED, TEXT, ink
from visuals.tokens import visible_token
from visuals.words import count

REFERENCE = "float32"
DIVERGED = REMOVED[TOP_K.name]  # vermillion: where the format's own stream first wrote another token
# llama.cpp's quantize tool: what each format added to perplexity on LLaMA-v1-7B (wikitext-2, float16 ≈ 5.9)
LLAMA_CPP = (("Q8_0", 0.0004), ("Q5_1", 0.0349), ("Q4_K_M", 0.0532), ("Q4_1", 0.1585))
SMALL_GAP = 0.02  # top two closer than 2 points: a small change in the logits can swap them
HEIGHT = 150  # both step charts' plots: with their titles, under the buttons and the step's two lines at 1280x720
LLAMA_CPP_SOURCE = "https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/quantize.cpp"
SAME, CHANGED = "KL, same top-1", "KL, top-1 changed"
DIVERGENCE = "first divergence"
DIST_BLANK = "Press Step: both next-token distributions appear here"
KL_BLANK = "KL per step appears here"


def distributions_figure(tokens: list[str], p_reference: list[float], p_format: list[float], fmt: str, step: int):
    """Grouped bars: each shown token's probability under float32 (solid) and under the format (hatched), on the same
    context. HTML (visuals.chart): redrawn on every step of the side by side."""
    if not tokens:
        return empty_html(DIST_BLANK, HEIGHT)
    reference = f"{REFERENCE} (reference)"
    columns = []
    for i, (token, ref, own) in enumerate(zip(tokens, p_reference, p_format)):
        shown = visible_token(token)
        bars = (
            Bar(reference, ref, KEPT, hover=f"{shown} · {REFERENCE}: {ref:.3f}"),
            Bar(fmt, own, CHOSEN, "outline", hover=f"{shown} · {fmt}: {own:.3f}"),
        )
        # the rank keeps two tokens that read alike (once made visible) two columns
        columns.append(Column(f"{i + 1}. {shown}", bars, grouped=True, shown=shown))
    chart = Chart(
        columns=tuple(columns),
        y=nice_axis(max([*p_reference, *p_format], default=1.0) or 1.0, title="probability"),
        title=f"Step {step}, on float32's text",
        legend=(Key(reference, KEPT), Key(fmt, CHOSEN, "outline")),
        height=HEIGHT,
        vertical_labels=True,
    )
    return figure_html(chart, cls="quantization-dist")


def kl_chart(kls: list[float], same: list[bool], divergence: int | None) -> Chart:
    """KL(float32 || format) per step; a step where the top token changed is drawn vermillion and hatched, and the
    first greedy divergence is a dotted line."""
    columns = tuple(_kl_column(i, kl, ok, i == divergence) for i, (kl, ok) in enumerate(zip(kls, same)))
    return Chart(
        columns=columns,
        y=nice_axis(max(kls, default=0.0) or 0.001, title="nats"),
        title="KL(float32 ‖ format) per step",
        legend=(Key(SAME, KEPT), Key(CHANGED, DIVERGED, "outline")),
        height=HEIGHT,
        x_title="step",
        label_every=_label_every(len(kls)),
    )


def _kl_column(i: int, kl: float, same: bool, diverged: bool) -> Column:
    """Step i's KL; the dotted line of the first divergence down the step where it came (its own column's: a new
    step's column is all a step adds)."""
    name, colour, look = (SAME, KEPT, "solid") if same else (CHANGED, DIVERGED, "outline")
    hover = f"step {i + 1}: KL {kl:.4f} nats, {'same top-1' if same else 'top-1 changed'}"
    rule = Rule(DIVERGENCE, ink(DIVERGED), dash="dotted") if diverged else None
    return Column(str(i + 1), (Bar(name, kl, colour, look, hover=hover),), rule=rule)


def _label_every(steps: int) -> int:
    """Every step named up to 20, then one in 5: a step adds only its column until then."""
    return 1 if steps <= 20 else 5


def kl_figure(kls: list[float], same: list[bool], divergence: int | None) -> str:
    return figure_html(kl_chart(kls, same, divergence), cls="quantization-kl") if kls else empty_html(KL_BLANK, HEIGHT)


def streams_html(reference: list[str], own: list[str], divergence: int | None, fmt: str) -> str:
    """The two greedy streams as chips, one row each; the first divergence outlined on both, later chips dashed."""
    rows = []
    for i, (name, tokens) in enumerate(((f"{REFERENCE}", reference), (fmt, own))):
        rows.append(
            f"<div class='quantization-row'><span class='quantization-name'>{html.escape(name)}</span>"
            f"<span class='quantization-tokens' id='quantization-stream-{i}'>{''.join(stream(tokens, divergence))}"
            "</span></div>"
        )
    return f"<div class='quantization-streams' id='quantization-streams-body'>{''.join(rows)}</div>"


def stream(tokens: list[str], divergence: int | None) -> tuple[str, ...]:
    """One stream's chips: what a step appends to its row (∅ while it is empty)."""
    chips = tuple(_chip(t, i, divergence) for i, t in enumerate(tokens))
    return chips or ("<span class='quantization-none'>∅</span>",)


def _chip(text: str, i: int, divergence: int | None) -> str:
    after = divergence is not None and i > divergence
    cls = "quantization-chip" + (" quantization-split" if i == divergence else " quantization-after" if after else "")
    title = f"step {i + 1}" + (": the first greedy divergence" if i == divergence else "")
    return f"<span class='{cls}' title='{title}'>{html.escape(visible_token(text))}</span>"


def tally_line(same: int, steps: int, kl_mean: float) -> str:
    return f"Same top-1 at <b>{same} of {count(steps, 'step')}</b>, mean KL <b>{kl_mean:.4f}</b> nats"


def divergence_line(divergence: int | None, gap: float | None, fmt: str) -> str:
    if divergence is None:
        return f"The greedy streams have not parted: {html.escape(fmt)} wrote float32's tokens so far."
    apart = f"float32's top two were {gap * 100:.1f} {term('points')} apart there"
    if gap < SMALL_GAP:
        return (
            f"<b>First greedy divergence at step {divergence + 1}</b> (outlined): {apart}, so a small change swapped "
            "them."
        )
    return (
        f"<b>First greedy divergence at step {divergence + 1}</b> (outlined): {apart}, so {html.escape(fmt)} moved "
        "their probabilities by at least that much."
    )


def step_view(status: str, dist: str, kls=(), same=(), divergence=None, reference=(), own=(), fmt="format") -> Parts:
    """The side by side as the page shows it, one patched element: the step's words, both distributions beside KL
    per step, the two streams. A step replaces the words and the distributions, and appends its KL column and a
    chip to each stream; the first divergence, a new chart shape, sends the whole view once."""
    kl = kl_chart(list(kls), list(same), divergence) if kls else None
    shape = ("steps", kl.label_every, fmt) if kl else ("blank", fmt)
    kl_html = figure_html(kl, cls="quantization-kl") if kl else empty_html(KL_BLANK, HEIGHT)
    whole = (
        f"<div class='quantization-view'><div id='quantization-status'>{status}</div>"
        f"<div class='quantization-charts'><div id='quantization-dist'>{dist}</div>"
        f"<div id='quantization-kl'>{kl_html}</div></div>"
        f"<div id='quantization-streams'>{streams_html(list(reference), list(own), divergence, fmt)}</div></div>"
    )
    strips = {
        "#quantization-stream-0": stream(list(reference), divergence),
        "#quantization-stream-1": stream(list(own), divergence),
    }
    slots = {"#quantization-status": status, "#quantization-dist": dist}
    attrs = {}
    if kl is not None:
        strips["#quantization-kl .lc-cols"] = tuple(column_html(c) for c in kl.columns)
        labels = tuple(label_html(c.label, i, kl.label_every) for i, c in enumerate(kl.columns))
        strips["#quantization-kl .lc-x"] = labels
        slots |= {"#quantization-kl .lc-y": ticks_html(kl.y), "#quantization-kl .lc-lines": lines_html(kl.y)}
        attrs[("#quantization-kl .lc-plot", "style")] = plot_style(kl.y)
    return Parts(html=whole, shape=shape, strips=strips, slots=slots, attrs=attrs)


CSS = f"""
.quantization-streams {{ font-family: ui-monospace, monospace; font-size: calc(15px * var(--lab-type, 1)); }}
.quantization-row {{ display: flex; flex-wrap: wrap; gap: 3px; align-items: center; margin: 2px 0; }}
.quantization-name {{ font-family: var(--font); font-weight: 700; min-width: 90px; color: {TEXT}; }}
.quantization-chip {{ border: 1px solid {OTHER}; border-radius: 4px; padding: 0 4px; }}
.quantization-split {{ border: 3px solid {DIVERGED}; color: {ink(DIVERGED)}; font-weight: 700; }}
.quantization-after {{ border-style: dashed; }}
.quantization-tokens {{ display: contents; }}  /* a stream's chips wrap in its row; a step appends to them */
/* the two charts side by side while they fit (the distribution the wider), else one above the other */
.quantization-charts {{ display: flex; flex-wrap: wrap; gap: 8px 16px; margin: 6px 0; }}
#quantization-dist {{ flex: 3 1 300px; min-width: 0; }}
#quantization-kl {{ flex: 2 1 240px; min-width: 0; }}
#quantization-kernels table, #quantization-speed-table table, #quantization-quality table {{
  display: block; overflow-x: auto; max-width: 100%;
}}
#quantization-kernels td, #quantization-kernels th, #quantization-speed-table td, #quantization-speed-table th,
#quantization-quality td, #quantization-quality th {{
  white-space: nowrap;
}}
"""
