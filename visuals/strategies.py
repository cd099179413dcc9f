"""Same logits, each strategy alone: one small panel per strategy, side by side.

Every panel shows the same top-N tokens at the model's own probabilities (whole vocabulary), each
bar coloured by its fate under that strategy alone: kept, or removed (pale, hatched, in the colour
of the stage that removed it). A dash marks the probability the strategy would sample the token with.
Takes plain results (`decoding.sandbox.Alone`); no torch here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from visuals.theme import CHOSEN, FONT_SIZE, KEPT, OTHER, REMOVED, REMOVED_OPACITY, STAGE_LABELS, TEXT, styled

if TYPE_CHECKING:
    from decoding.sandbox import Alone

NAMES = {"greedy": "greedy", **STAGE_LABELS}
REST_GAP = 3  # the "rest" bar stands this many ranks after the last shown token


def percent(mass: float) -> str:
    """A share of probability mass, readable at a glance: 65%, 6.4%, 0.26%, 99.5%, 100%."""
    pct = 100 * mass
    if pct >= 99.95:
        return "100%"
    if pct >= 99 or 1 <= pct < 10:
        return f"{pct:.1f}%"
    return f"{pct:.0f}%" if pct >= 10 else f"{pct:.2g}%"


def panel_title(r: Alone) -> str:
    """'top-p 0.9' over 'keeps N' over '(M% of mass)', in lines of at most ~13 characters: at 800 px five panels
    share the width, and a longer line would run into the next panel's title."""
    head = NAMES.get(r.name, r.name)
    value = "" if r.value is None else f"{r.value:g}"
    label = f"{head} {value}".strip()
    name = f"<b>{head}</b><br><b>{value}</b>" if len(label) > 13 else f"<b>{label}</b>"
    usual = "<br><i>(usual value)</i>" if r.usual and r.value is not None else ""
    # top-k keeps every token tied with the k-th, so it can keep more than k
    note = "<br><i>ties kept</i>" if r.name == "top_k" and r.kept > (r.value or 0) else ""
    return f"{name}{usual}{note}<br>keeps {r.kept:,}<br>({percent(r.mass)} of mass)"


def _fate_name(r: Alone, keep: bool) -> str:
    if keep:
        return "chosen by greedy" if r.name == "greedy" else "kept"
    return "not the argmax" if r.name == "greedy" else f"removed by {NAMES.get(r.name, r.name)}"


def _colour(r: Alone, keep: bool) -> str:
    if keep:
        return CHOSEN if r.name == "greedy" else KEPT
    return REMOVED.get(r.name, OTHER)


def _bars(r: Alone, keep: bool, labels: dict[int, str]) -> dict:
    """The bars of one fate in one panel: the top-N tokens it applies to, then its share of the rest."""
    idx = [i for i, k in enumerate(r.keeps) if k == keep]
    x = [i + 1 for i in idx]
    y = [r.before[i] for i in idx]
    base = [0.0] * len(idx)
    data = [[f"id {r.ids[i]} {labels.get(r.ids[i], '')}", r.before[i], r.after[i]] for i in idx]
    rest = r.rest_kept if keep else r.rest_removed
    if r.rest and rest > 0:
        # the rest is one stacked bar: the kept part at the bottom, the removed part on top of it
        x.append(len(r.ids) + REST_GAP)
        y.append(rest)
        base.append(0.0 if keep else r.rest_kept)
        data.append([f"the other {r.rest:,} tokens together", rest, r.rest_after if keep else 0.0])
    return {"x": x, "y": y, "base": base, "customdata": data}


def strategies_figure(results: list[Alone], labels: dict[int, str] | None = None, height: int = 440) -> go.Figure:
    """One panel per result, left to right; `labels` (optional) maps token id -> visible text for hover."""
    labels = labels or {}
    n_top = max((len(r.ids) for r in results), default=0)
    fig = make_subplots(
        rows=1,
        cols=max(len(results), 1),
        shared_yaxes=True,
        horizontal_spacing=0.012,
        subplot_titles=[panel_title(r) for r in results],
    )
    shown: set[str] = set()
    for col, r in enumerate(results, 1):
        _panel(fig, r, col, labels, shown)
    tops = [max(r.before + r.after + [r.rest_kept + r.rest_removed, r.rest_after]) for r in results]
    fig.update_yaxes(range=[0, min(1.0, max(tops, default=1)) * 1.05], tickformat=".0%")
    fig.update_yaxes(title_text="probability", row=1, col=1)
    _rank_axis(fig, results, n_top)
    fig.update_xaxes(title_text=f"rank (top {n_top}), then all the rest", row=1, col=(len(results) + 1) // 2)
    fig.update_annotations(font={"size": FONT_SIZE - 1})
    fig = styled(fig, None, height=height)
    fig.update_layout(
        barmode="overlay",
        bargap=0.1,
        margin={"t": 130, "b": 90, "l": 60, "r": 10},
        legend={"orientation": "h", "x": 0, "y": -0.2, "yanchor": "top"},
    )
    return fig


def _panel(fig: go.Figure, r: Alone, col: int, labels: dict[int, str], shown: set[str]) -> None:
    """One strategy's panel: its bars by fate (each fate in the legend once), and the p it samples with."""
    for keep in (True, False):
        bars = _bars(r, keep, labels)
        if not bars["x"]:
            continue
        name = _fate_name(r, keep)
        fig.add_bar(
            **bars,
            name=name,
            legendgroup=name,
            showlegend=name not in shown,
            marker={
                "color": _colour(r, keep),
                "opacity": 1.0 if keep else REMOVED_OPACITY,
                "pattern": {"shape": "" if keep else "/"},
                "line": {"width": 0},
            },
            hovertemplate="%{customdata[0]}<br>model p %{customdata[1]:.4f}"
            "<br>this strategy samples with p %{customdata[2]:.4f}<extra></extra>",
            row=1,
            col=col,
        )
        shown.add(name)
    rest = [r.rest_after] if r.rest else []
    fig.add_scatter(
        x=list(range(1, len(r.ids) + 1)) + [len(r.ids) + REST_GAP] * len(rest),
        y=r.after + rest,
        mode="markers",
        name="p it samples with",
        legendgroup="after",
        showlegend=col == 1,
        marker={"symbol": "line-ew", "size": 12, "line": {"width": 3, "color": TEXT}},
        hoverinfo="skip",
        row=1,
        col=col,
    )


def _rank_axis(fig: go.Figure, results: list[Alone], n_top: int) -> None:
    """Rank ticks under every panel, and "rest" under the bar for all the other tokens."""
    has_rest = any(r.rest for r in results)
    # a rank tick too close to "rest" would overprint it
    last = n_top - REST_GAP - 2 if has_rest else n_top
    ticks = [t for t in (1, 5, 10, 20, 30, 40, 50) if t <= max(last, 1) and (t != 5 or n_top <= 12)]
    fig.update_xaxes(
        tickvals=[*ticks, n_top + REST_GAP][: len(ticks) + has_rest],
        ticktext=[*map(str, ticks), "rest"][: len(ticks) + has_rest],
        tickangle=0,
        tickfont={"size": FONT_SIZE - 2},
    )
