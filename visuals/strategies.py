"""Same logits, each strategy alone: one small panel per strategy, side by side.

Every panel shows the same top-N tokens at the model's own probabilities (whole vocabulary), each
bar coloured by its fate under that strategy alone: kept, or removed (pale, hatched, in the colour
of the stage that removed it). A dash marks the probability the strategy would sample the token with.
Takes plain results (`decoding.sandbox.Alone`); no torch here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from decoding.stages import TOP_K
from visuals.theme import (
    CHOSEN,
    FONT_SIZE,
    KEPT,
    OTHER,
    REMOVED,
    REMOVED_OPACITY,
    STAGE_LABELS,
    TEXT,
    figure_from,
    look,
)

if TYPE_CHECKING:
    from decoding.sandbox import Alone

NAMES = {"greedy": "greedy", **STAGE_LABELS}
REST_GAP = 3  # the "rest" bar stands this many ranks after the last shown token
SPACING = 0.012  # between panels, a share of the width


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
    note = "<br><i>ties kept</i>" if r.name == TOP_K.name and r.kept > (r.value or 0) else ""
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
    """One panel per result, left to right; `labels` (optional) maps token id -> visible text for hover.
    Built as plain data (`theme.figure_from`): it follows every Step of every student, and plotly's subplot
    helpers and per-property validation cost ~55 ms of server CPU per draw, more than the forward pass."""
    labels = labels or {}
    n_top = max((len(r.ids) for r in results), default=0)
    cols = max(len(results), 1)
    width = (1 - SPACING * (cols - 1)) / cols
    domains = [[c * (width + SPACING), c * (width + SPACING) + width] for c in range(cols)]
    tops = [max(r.before + r.after + [r.rest_kept + r.rest_removed, r.rest_after]) for r in results]
    layout = look(None, height)
    axis = layout.pop("xaxis")
    del layout["yaxis"]
    x_ticks = _rank_axis(results, n_top)
    y_range = [0, min(1.0, max(tops, default=1)) * 1.05]
    for c, domain in enumerate(domains, 1):
        x, y = _suffix(c)
        layout["xaxis" + x] = {**axis, **x_ticks, "domain": domain, "anchor": "y" + y}
        layout["yaxis" + y] = {**axis, "domain": [0, 1], "anchor": "x" + x, "range": y_range, "tickformat": ".0%"}
        if c > 1:  # shared y: one scale, its labels on the first panel only
            layout["yaxis" + y] |= {"matches": "y", "showticklabels": False}
    layout["yaxis"]["title"] = {"text": "probability"}
    layout["xaxis" + _suffix((cols + 1) // 2)[0]]["title"] = {"text": f"rank (top {n_top}), then all the rest"}
    layout["annotations"] = [_title(panel_title(r), domain) for r, domain in zip(results, domains)]
    layout |= {
        "barmode": "overlay",
        "bargap": 0.1,
        # the legend hangs below the rank axis's title (at -0.2 its first row sat on the title), in up to three rows
        "margin": {"t": 130, "b": 130, "l": 60, "r": 10},
        "legend": {**layout["legend"], "orientation": "h", "x": 0, "y": -0.32, "yanchor": "top"},
    }
    shown: set[str] = set()
    data = [trace for col, r in enumerate(results, 1) for trace in _panel(r, col, labels, shown)]
    return figure_from(data, layout)


def _suffix(col: int) -> tuple[str, str]:
    """Axis name suffixes of a panel: '' for the first, then '2', '3'..."""
    return ("", "") if col == 1 else (str(col), str(col))


def _title(text: str, domain: list[float]) -> dict:
    """A panel's title over its middle, as plotly's subplot titles are placed."""
    return {
        "text": text,
        "x": (domain[0] + domain[1]) / 2,
        "y": 1.0,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "center",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": FONT_SIZE - 1},
    }


def _panel(r: Alone, col: int, labels: dict[int, str], shown: set[str]) -> list[dict]:
    """One strategy's panel: its bars by fate (each fate in the legend once), and the p it samples with."""
    x, y = _suffix(col)
    where = {"xaxis": "x" + x, "yaxis": "y" + y}
    traces = []
    for keep in (True, False):
        bars = _bars(r, keep, labels)
        if not bars["x"]:
            continue
        name = _fate_name(r, keep)
        traces.append(
            {
                "type": "bar",
                **bars,
                **where,
                "name": name,
                "legendgroup": name,
                "showlegend": name not in shown,
                "marker": {
                    "color": _colour(r, keep),
                    "opacity": 1.0 if keep else REMOVED_OPACITY,
                    "pattern": {"shape": "" if keep else "/"},
                    "line": {"width": 0},
                },
                "hovertemplate": "%{customdata[0]}<br>model p %{customdata[1]:.4f}"
                "<br>this strategy samples with p %{customdata[2]:.4f}<extra></extra>",
            }
        )
        shown.add(name)
    rest = [r.rest_after] if r.rest else []
    traces.append(
        {
            "type": "scatter",
            "x": list(range(1, len(r.ids) + 1)) + [len(r.ids) + REST_GAP] * len(rest),
            "y": r.after + rest,
            **where,
            "mode": "markers",
            "name": "p it samples with",
            "legendgroup": "after",
            "showlegend": col == 1,
            "marker": {"symbol": "line-ew", "size": 12, "line": {"width": 3, "color": TEXT}},
            "hoverinfo": "skip",
        }
    )
    return traces


def _rank_axis(results: list[Alone], n_top: int) -> dict:
    """Rank ticks under every panel, and "rest" under the bar for all the other tokens."""
    has_rest = any(r.rest for r in results)
    # a rank tick too close to "rest" would overprint it
    last = n_top - REST_GAP - 2 if has_rest else n_top
    ticks = [t for t in (1, 5, 10, 20, 30, 40, 50) if t <= max(last, 1) and (t != 5 or n_top <= 12)]
    return {
        "tickvals": [*ticks, n_top + REST_GAP][: len(ticks) + has_rest],
        "ticktext": [*map(str, ticks), "rest"][: len(ticks) + has_rest],
        "tickangle": 0,
        "tickfont": {"size": FONT_SIZE - 2},
    }
