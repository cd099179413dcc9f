"""The many-runs tally: one prompt's distinct greedy completions as bars, most common first, each with the
runs (batch size, condition) that wrote it. Plain data in: `decoding.nondeterminism.tally.Tally.per_prompt`."""

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from visuals.theme import BATCH_COLOURS, CHOSEN, empty_figure, styled
from visuals.tokens import visible_text


def _snippet(text: str, reference: str, width: int = 56) -> str:
    """The part of `text` where it leaves `reference` (the most common completion), so bars read apart."""
    n = 0
    while n < min(len(text), len(reference)) and text[n] == reference[n]:
        n += 1
    start = max(0, n - 12) if text != reference else 0
    # begin the label at a word boundary
    start = text.rfind(" ", 0, start + 1) + 1 if start else 0
    piece = visible_text(text[start : start + width])
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


def run_label(batch_size: int, condition: str) -> str:
    return "solo" if batch_size == 1 else f"batch {batch_size} {condition}"


def tally_figure(groups: list[tuple[str, list[tuple[str, int]]]], label: str = "", top: int = 8, sources=None):
    """One panel per prompt: its distinct completions as bars, most common first (orange); each label starts
    where that completion leaves the most common one, so bars that share a long start still read apart.
    `sources` (optional, per group, parallel to its completions): the (batch size, condition) runs behind each."""
    sources = sources or [[[] for _ in c] for _, c in groups]
    groups = [
        (prompt, sorted(zip(c, where), key=lambda x: -x[0][1])) for (prompt, c), where in zip(groups, sources) if c
    ]
    if not groups:
        return empty_figure("Press Many runs: how many different texts does 'deterministic' greedy give?")
    shown = [c[:top] for _, c in groups]
    titles = [
        f"“{_snippet(prompt, prompt, 48)}”: {len(c)} distinct in {sum(n for (_, n), _ in c)} runs"
        + (f" (top {top} shown)" if len(c) > top else "")
        for (prompt, c) in groups
    ]
    fig = make_subplots(
        rows=len(groups),
        cols=1,
        subplot_titles=titles,
        row_heights=[len(s) for s in shown],
        vertical_spacing=0.32 / len(groups),
        shared_xaxes=True,
    )
    for g, bars in enumerate(shown):
        fig.add_trace(_bars(bars, g), row=g + 1, col=1)
        fig.update_yaxes(
            autorange="reversed",
            type="category",
            row=g + 1,
            col=1,
            tickfont={"family": "ui-monospace, monospace", "size": 13},
        )
    fig.update_xaxes(title="runs", rangemode="tozero", row=len(groups), col=1)
    fig.update_xaxes(dtick=1 if max(n for c in shown for (_, n), _ in c) <= 10 else None)  # counts are whole runs
    height = 120 + 36 * sum(len(s) for s in shown) + 60 * len(groups)
    fig = styled(fig, "Distinct greedy completions" + (f" · {label}" if label else ""), height=height)
    fig.update_layout(showlegend=False, margin={"l": 20})
    fig.update_annotations(font={"size": 14}, xanchor="left", x=0)
    return fig


def _bars(bars: list, g: int) -> go.Bar:
    """Prompt g's completions, ((text, count), runs) each, most common first."""
    reference = bars[0][0][0]
    hover = [
        visible_text(text) + (f"<br>from: {', '.join(run_label(*r) for r in where)}" if where else "")
        for (text, _), where in bars
    ]
    return go.Bar(
        y=[f"P{g + 1} #{k + 1} {_snippet(text, reference)}" for k, ((text, _), _) in enumerate(bars)],
        x=[n for (_, n), _ in bars],
        orientation="h",
        text=[n for (_, n), _ in bars],
        textposition="outside",  # on the page, not on the bar's colour: readable at 4.5:1 whatever the bar
        cliponaxis=False,
        marker_color=[CHOSEN] + [BATCH_COLOURS[0]] * (len(bars) - 1),
        customdata=hover,
        hovertemplate="%{x} runs wrote:<br>%{customdata}<extra></extra>",
    )
