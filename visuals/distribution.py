"""The next-token distribution: the model's top-N candidates, each bar coloured by its fate.

By default the bars are what the next token is drawn from: the probabilities after the learner's settings
(penalties, temperature, truncation), on a fixed 0-1 axis, so temperature 2 visibly flattens them; a dash beside
each bar is the model's own probability, and a removed token is an empty hatched outline at its model probability.
Probabilities are over the WHOLE vocabulary (the top N are never renormalised among themselves), so the bars of a
flat distribution are all short and the missing mass is visible.
The thresholds the truncating samplers used are drawn on the chart: where top-k cuts, the
cumulative mass top-p stops at, and min-p's floor relative to the top token.
"""

import math

import plotly.graph_objects as go

from decoding.stages import MIN_P, TEMPERATURE, TOP_K, TOP_P
from decoding.trace import Step
from visuals.theme import (
    CHOSEN,
    FORCED,
    KEPT,
    REMOVED,
    REMOVED_OPACITY,
    STAGE_LABELS,
    TEXT,
    fate_colour,
    figure_from,
    look,
)
from visuals.tokens import visible_token

MODES = ("after your settings", "model probability", "raw logits")
NEAR_TIE = 0.05  # a top-1/top-2 probability gap below this is where runs fork
_AXIS = {
    MODES[0]: "probability after your settings",
    MODES[1]: "model probability (whole vocabulary)",
    MODES[2]: "logit",
}
MODEL_MARK = "the model's own probability"


def near_tie(step: Step) -> tuple[float, bool]:
    """The model's top-1 minus top-2 probability, and whether that is a near-tie."""
    probs = sorted((c.prob_before for c in step.top), reverse=True)
    gap = probs[0] - probs[1] if len(probs) > 1 else 1.0
    return gap, gap < NEAR_TIE


def shown_candidates(step: Step, n: int, chosen: bool = True) -> list:
    """The `n` most probable candidates by the model's probability, plus the chosen token if it ranked lower."""
    shown = sorted(step.top, key=lambda c: -c.prob_before)[:n]
    pick = step.candidate(step.token_id)
    if chosen and pick is not None and pick not in shown:
        shown.append(pick)
    return shown


def bar_value(c, mode: str) -> float:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return c.prob_after if mode == MODES[0] else c.prob_before if mode == MODES[1] else c.logit


def distribution_figure(step: Step, mode: str = MODES[0], chosen: bool = True, n: int = 20) -> go.Figure:
    """Top-`n` bars of `step` (a recorded step, or a preview when `chosen` is False)."""
    top = shown_candidates(step, n, chosen)
    values = [bar_value(c, mode) for c in top]
    labels = [f"{visible_token(c.text)} " + ("" if i < n else f"(#{step.rank})") for i, c in enumerate(top)]
    labels = _unique(labels)
    # one trace per fate, so the legend names each colour (never colour alone)
    data = [_bars(fate, top, values, labels, step, chosen, mode) for fate in _fates(top, step, chosen)]
    if mode == MODES[0]:
        data.append(_model_marks(top, labels))
    layout = look(_title(step, chosen), height=400)
    layout["xaxis"] |= dict(
        categoryorder="array", categoryarray=labels, tickangle=-45, tickfont={"size": 15, "family": "monospace"}
    )
    layout["yaxis"] |= {"title": {"text": _AXIS[mode]}}
    if mode != MODES[2]:  # a fixed axis: a flatter distribution looks flatter, never rescaled back to full height
        layout["yaxis"] |= {"range": [0, 1.02], "autorange": False, "dtick": 0.2}
    layout["shapes"], layout["annotations"] = [], []
    if mode != MODES[2]:
        _draw_thresholds(data, layout, step, top, values, labels)
    legend = {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom", "bgcolor": "rgba(0,0,0,0)"}
    # hovermode x: a click anywhere in a bar's column picks it, even a bar a few pixels tall
    layout |= dict(barmode="overlay", bargap=0.15, legend=legend, hovermode="x")
    layout["margin"] |= {"t": 84, "b": 80}
    return figure_from(data, layout)


def _bars(fate: str, top, values: list[float], labels: list[str], step: Step, chosen: bool, mode: str) -> dict:
    idx = [i for i, c in enumerate(top) if _fate(c, step, chosen) == fate]
    removed = fate not in ("kept", "chosen", "forced")
    colour = _fate_colour(fate)
    name = _FATE_NAMES.get(fate, f"removed by {STAGE_LABELS.get(fate, fate)}")
    marker = {"color": colour, "opacity": 1.0, "pattern": {"shape": ""}, "line": {"width": 0}}
    heights = [values[i] for i in idx]
    if removed and mode == MODES[0]:
        # nothing is left of it after your settings: an empty hatched outline at the probability the model gave it
        heights = [top[i].prob_before for i in idx]
        marker = {
            "color": "rgba(0,0,0,0)",
            "pattern": {"shape": "/", "fgcolor": colour, "fillmode": "overlay"},
            "line": {"width": 2, "color": colour},
        }
        name += " (outline: its model probability)"
    elif removed:
        marker |= {"opacity": REMOVED_OPACITY, "pattern": {"shape": "/"}}
    return dict(
        type="bar",
        x=[labels[i] for i in idx],
        y=heights,
        name=name,
        marker=marker,
        customdata=[[top[i].id, top[i].prob_before, top[i].prob_after, top[i].logit] for i in idx],
        hovertemplate="id %{customdata[0]}<br>model p %{customdata[1]:.4f}<br>after %{customdata[2]:.4f}"
        "<br>logit %{customdata[3]:.2f}<extra></extra>",
    )


def _model_marks(top, labels: list[str]) -> dict:
    """A dash at each token's model probability, beside its bar: how far your settings moved it."""
    return dict(
        type="scatter",
        mode="markers",
        x=labels,
        y=[c.prob_before for c in top],
        name=MODEL_MARK,
        marker={"symbol": "line-ew", "size": 22, "line": {"width": 3, "color": TEXT}},
        hoverinfo="skip",
    )


def _unique(labels: list[str]) -> list[str]:
    # two tokens can look alike once spaces are made visible; a category axis needs distinct names
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label}\u200b" * seen[label])
    return out


_FATE_NAMES = {"kept": "kept", "chosen": "chosen", "forced": "forced by you"}


def _fate(c, step: Step, chosen: bool) -> str:
    if chosen and c.id == step.token_id:
        return "forced" if step.forced else "chosen"
    return c.removed_by or "kept"


def _fates(top, step: Step, chosen: bool) -> list[str]:
    order = ["chosen", "forced", "kept", *REMOVED]
    present = {_fate(c, step, chosen) for c in top}
    return [f for f in order if f in present] + sorted(present - set(order))


def _fate_colour(fate: str) -> str:
    if fate in ("chosen", "forced", "kept"):
        return {"chosen": CHOSEN, "forced": FORCED, "kept": KEPT}[fate]
    return fate_colour(fate)


def _draw_thresholds(data: list, layout: dict, step: Step, top, values: list[float], labels: list[str]) -> None:
    s = step.settings
    if s.get(TEMPERATURE.field, TEMPERATURE.neutral) == 0:
        return
    shapes, notes = layout["shapes"], layout["annotations"]
    k = s.get(TOP_K.field, TOP_K.neutral)
    if 0 < k < len(top):
        shapes.append(_line(x=k - 0.5, colour=REMOVED[TOP_K.name], dash="dash", width=2))
        notes.append(dict(x=k - 0.5, y=1, yref="paper", text=f"top-k = {k}", showarrow=False, xanchor="left"))
    top_p = s.get(TOP_P.field, TOP_P.neutral)
    if top_p < 1.0:
        cumulative, total = [], 0.0
        for v in values:
            total += v
            cumulative.append(total)
        line = {"color": REMOVED[TOP_P.name], "width": 2}
        data.append(
            dict(
                type="scatter",
                x=labels,
                y=cumulative,
                yaxis="y2",
                mode="lines+markers",
                name="cumulative mass",
                line=line,
                hoverinfo="skip",
            )
        )
        shapes.append(_line(y=top_p, colour=REMOVED[TOP_P.name], dash="dot", yref="y2"))
        notes.append(
            dict(x=1, xref="paper", y=top_p, yref="y2", text=f"top-p = {top_p:g}", showarrow=False, xanchor="right")
        )
        layout["yaxis2"] = look()["yaxis"] | {"overlaying": "y", "side": "right", "range": [0, 1.05], "showgrid": False}
    min_p = s.get(MIN_P.field, MIN_P.neutral)
    if min_p > 0 and values:
        floor = min_p * max(values)
        shapes.append(_line(y=floor, colour=REMOVED[MIN_P.name], dash="dash", width=2))
        notes.append(
            dict(x=0.5, xref="paper", y=floor, text=f"min-p floor = {min_p:g} × top", showarrow=False, yanchor="bottom")
        )


def _line(colour: str, dash: str, width: float | None = None, x=None, y=None, yref: str = "y") -> dict:
    """A full-height line at `x` or a full-width line at `y` (what plotly's add_vline / add_hline draw)."""
    line = {"color": colour, "dash": dash} | ({"width": width} if width else {})
    if x is not None:
        return dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain", line=line)
    return dict(type="line", x0=0, x1=1, xref="x domain", y0=y, y1=y, yref=yref, line=line)


def _title(step: Step, chosen: bool) -> str:
    gap, tie = near_tie(step)
    head = f"step {step.index + 1}" if chosen else f"next token (step {step.index + 1}, not chosen yet)"
    # the model's own distribution, before temperature and the filters: a knob moved leaves it as it is
    entropy = f"model's entropy {step.entropy_bits:.2f} bits" if math.isfinite(step.entropy_bits) else "entropy n/a"
    fork = " ⚠ near-tie: runs fork here" if tie else ""
    pick = ""
    if chosen:
        how = "forced" if step.forced else "chosen"
        pick = (
            f"<br><sup>{how}: {visible_token(step.token_text)} (model p={step.prob_before:.3f}, rank {step.rank})</sup>"
        )
    return f"{head} · {entropy} · top-1 − top-2 gap {gap:.3f}{fork}{pick}"


def candidate_choices(step: Step, n: int = 20) -> list[tuple[str, int]]:
    """(label, id) pairs of the top-`n` candidates, for a 'force this token' picker."""
    top = sorted(step.top, key=lambda c: -c.prob_before)[:n]
    return [(f"#{i + 1} {visible_token(c.text)}  (p={c.prob_before:.3f})", c.id) for i, c in enumerate(top)]
