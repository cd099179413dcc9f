"""The sandbox's other two views: the temperature sweep (top-p floods, min-p adapts) with the sentence that says
what it measured, and the table of where the engines' stage orders keep different tokens, plus the same comparison
as one line for the step tab. Plain data in (`decoding.sandbox.Sweep`, `OrderComparison`,
`decoding.inspector.Inspection`); no torch here."""

from __future__ import annotations

from html import escape as html_escape
from typing import TYPE_CHECKING

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from decoding.stages import MIN_P, TOP_P
from visuals.glossary import term
from visuals.strategies import percent
from visuals.theme import REMOVED, STAGE_LABELS, TEXT, styled
from visuals.tokens import visible_token

if TYPE_CHECKING:
    from decoding.inspector import Inspection
    from decoding.sandbox import OrderComparison, Sweep


def sweep_figure(sweep: Sweep, height: int = 400) -> go.Figure:
    """Tokens kept (log axis) and probability mass kept, against temperature, for top-p and min-p."""
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.09,
        subplot_titles=("tokens kept (log scale)", "probability kept, at that temperature"),
    )
    lines = (
        (f"{TOP_P.label} {sweep.top_p:g}", sweep.top_p_kept, sweep.top_p_mass, REMOVED[TOP_P.name], "solid", "circle"),
        (f"{MIN_P.label} {sweep.min_p:g}", sweep.min_p_kept, sweep.min_p_mass, REMOVED[MIN_P.name], "dash", "square"),
    )
    for name, kept, mass, colour, dash, symbol in lines:
        style = {"line": {"color": colour, "width": 3, "dash": dash}, "marker": {"symbol": symbol, "size": 7}}
        fig.add_scatter(
            x=sweep.temperatures,
            y=kept,
            name=name,
            legendgroup=name,
            mode="lines+markers",
            hovertemplate="T %{x:g}: keeps %{y:,} tokens<extra>" + name + "</extra>",
            row=1,
            col=1,
            **style,
        )
        fig.add_scatter(
            x=sweep.temperatures,
            y=mass,
            name=name,
            legendgroup=name,
            showlegend=False,
            mode="lines+markers",
            hovertemplate="T %{x:g}: %{y:.1%} of the mass<extra>" + name + "</extra>",
            row=1,
            col=2,
            **style,
        )
    for col in (1, 2):
        fig.add_vline(x=1.0, line={"color": TEXT, "dash": "dot", "width": 1}, row=1, col=col)
    fig.update_yaxes(type="log", dtick=1, title_text=f"tokens kept (of {sweep.vocab:,})", row=1, col=1)
    fig.update_yaxes(range=[0, 1.05], tickformat=".0%", row=1, col=2)
    fig.update_xaxes(title_text="temperature (dotted: 1, unchanged)")  # fits a panel 300 px wide
    fig = styled(fig, None, height=height)
    # the legend at the chart's bottom edge, under the x titles: placed a fraction of the plot below it, projector
    # mode's larger tick labels and titles reached it
    legend = {"orientation": "h", "x": 0, "y": 0, "yref": "container", "yanchor": "bottom"}
    fig.update_layout(legend=legend, margin={"t": 40, "b": 100})
    return fig


ENGINE_ORDER = term("engine order", "Engine order")  # the line on the step tab that compares the orders
_TABLE = 'style="border-collapse:collapse;font-size: calc(17px * var(--lab-type, 1));margin:6px 0 12px 0"'


def describe_sweep(s: Sweep) -> str:
    """One or two sentences that say what the sweep measured, built from its numbers."""
    t0, t1 = s.temperatures[0], s.temperatures[-1]
    p0, p1, m0, m1 = s.top_p_kept[0], s.top_p_kept[-1], s.min_p_kept[0], s.min_p_kept[-1]
    text = (
        f"On these logits ({s.vocab:,} tokens): from T = {t0:g} to T = {t1:g}, top-p {s.top_p:g} keeps "
        f"{p0:,} → {p1:,} tokens and min-p {s.min_p:g} keeps {m0:,} → {m1:,}."
    )
    if 1.0 in s.temperatures:
        i = s.temperatures.index(1.0)
        text += f" At T = 1 (the model's own distribution): top-p {s.top_p_kept[i]:,}, min-p {s.min_p_kept[i]:,}."
    if p1 >= 10 * m1:
        return text + f" At T = {t1:g} top-p keeps {p1 / m1:,.0f}× as many tokens as min-p: the flat tail floods in."
    if p1 > m1:
        return text + f" At T = {t1:g} top-p keeps {p1 / m1:.1f}× as many tokens as min-p."
    return text + f" At T = {t1:g} min-p keeps as many tokens as top-p or more: the tail here is close to the top."


_CELL = 'style="padding:6px 14px;border-bottom:1px solid rgba(128,128,128,0.35);text-align:{}"'


def _table(header: list[str], rows: list[list[str]], align: str) -> str:
    """A small HTML table; `align` has one letter per column (l or r). Inherits the page's text colour."""
    cell = [_CELL.format("right" if a == "r" else "left") for a in align]
    head = "".join(f"<th {c}>{h}</th>" for c, h in zip(cell, header))
    body = "".join("<tr>" + "".join(f"<td {c}>{v}</td>" for c, v in zip(cell, row)) + "</tr>" for row in rows)
    return f"<table {_TABLE}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def orders_table(comparison: OrderComparison, labels: dict[int, str] | None = None) -> str:
    """HTML: each engine order's stages and what it keeps, then the tokens the orders disagree on."""
    labels = labels or {}
    rows = [
        [
            f"<b>{o.order}</b>",
            " → ".join(STAGE_LABELS.get(s, s) for s in o.stages) or "none",
            f"{o.kept:,}",
            percent(o.mass),
        ]
        for o in comparison.orders
    ]
    html = _table(["engine order", "stages that ran, in order", "tokens kept", "model probability kept"], rows, "llrr")
    if not comparison.n_differing:
        return html + "<p>The three orders keep <b>the same tokens</b> with these settings.</p>"
    everyone = [o.order for o in comparison.orders]
    diff = [
        [
            html_escape(labels.get(i, f"id {i}")),
            f"{p:.4f}",
            ", ".join(keepers),
            ", ".join(o for o in everyone if o not in keepers),
        ]
        for i, p, keepers in comparison.differing
    ]
    note = f"<p><b>The orders keep different tokens</b> ({comparison.n_differing:,} differ; the most probable):</p>"
    return html + note + _table(["token", "model probability", "kept by", "removed by"], diff, "lrll")


def orders_markdown(inspection: Inspection | None, current: str) -> str:
    """The step tab's line: how many tokens each engine order keeps on this step, and where they differ."""
    if inspection is None:
        return f"{ENGINE_ORDER}: press Prefill to compare the orders on the current step."
    counts = " · ".join(
        f"**{o}** keeps {n:,}" + (" (yours)" if o == current else "") for o, n in inspection.kept_by_order.items()
    )
    if not inspection.differing:
        return f"{ENGINE_ORDER}, this step: {counts}. The kept sets are identical here."
    rows = ", ".join(f"`{visible_token(t)}` (kept by {', '.join(keepers)})" for t, keepers in inspection.differing)
    return f"{ENGINE_ORDER}, this step: {counts}. **They differ** on: {rows}."
