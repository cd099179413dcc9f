"""Figures of the batching lab: the same prompt alone and as row 0 of bigger batches, compared token by token.

A greedy token flips when the batch's logit noise is big enough to swap the top two logits: one goes up by
at most the noise, the other down by at most the noise, so a flip needs gap ≤ 2 × noise
(`decoding.nondeterminism.flips.flip_possible`, the one rule every figure and caption reads). The scatter of gap
against noise shows exactly that. Rows are read by attribute (batch_size, token_texts, noise, gap, agree,
first_divergence), the fields of `decoding.nondeterminism.experiment.RowResult`; this module never imports torch.
Steps are shown 1-based ("token 12" = the 12th generated token).
"""

import html

import plotly.graph_objects as go

from decoding.nondeterminism.flips import flip_possible
from visuals.log_axis import log_axis, zero_floor
from visuals.theme import BATCH_COLOURS, CHOSEN, GRID, OTHER, TEXT, empty_figure, styled
from visuals.tokens import visible_text

ZERO_LABEL = "0 (bit-identical)"  # noise exactly 0
TIE_LABEL = "0 (exact tie)"  # solo's top two logits exactly equal
# open shapes and dashes per batch size, so rows with identical numbers stay visible on top of each other
SYMBOLS = ["circle-open", "square-open", "diamond-open", "triangle-up-open", "x-thin-open", "cross-thin-open"]
DASHES = ["solid", "dash", "dashdot", "longdash", "dot", "longdashdot"]


def _visible(text: str) -> str:
    return html.escape(visible_text(text))


def _span(texts: list[str], start: int, cls: str) -> str:
    """Tokens as inline text (one span each, hover shows its number) inside one span of class `cls`."""
    inner = "".join(
        f'<span class="bl-tok" title="token {start + k + 1}">{_visible(t)}</span>' for k, t in enumerate(texts)
    )
    return f'<span class="{cls}">{inner}</span>' if inner else ""


def row_label(row) -> str:
    return "solo (batch 1)" if row.batch_size == 1 else f"batch {row.batch_size}"


def texts_html(solo, rows: list) -> str:
    """The solo text, then row 0 of each batch: shared text dimmed, the first divergent token highlighted,
    the batch's branch after it, and what solo wrote instead struck through underneath."""
    if solo is None:
        return '<div class="bl-empty">Press <b>Run</b> to decode the prompt alone and inside batches.</div>'
    lines = [_line(row_label(solo), "", _span(solo.token_texts, 0, "bl-solo"))]
    for row in rows:
        d = row.first_divergence
        if d is None:
            exact = all(v == 0 for v in row.noise if v is not None)
            badge = f'<span class="bl-badge bl-same">identical to solo{" · noise 0" if exact else ""}</span>'
            lines.append(_line(row_label(row), badge, _span(row.token_texts, 0, "bl-shared")))
            continue
        badge = f'<span class="bl-badge bl-diff">diverged at token {d + 1}</span>'
        flip_title = f"token {d + 1}: batch chose {row.token_texts[d]!r}, solo chose {solo.token_texts[d]!r}"
        body = (
            _span(row.token_texts[:d], 0, "bl-shared")
            + f'<span class="bl-flip" title="{html.escape(flip_title)}">{_visible(row.token_texts[d])}</span>'
            + _span(row.token_texts[d + 1 :], d + 1, "bl-branch")
            + '<div class="bl-solo-went">solo wrote instead: '
            + _span(solo.token_texts[d:], d, "bl-struck")
            + "</div>"
        )
        lines.append(_line(row_label(row), badge, body))
    legend = (
        '<div class="bl-legend">dimmed = same as solo · <span class="bl-flip">highlighted</span> = first token that '
        'differs · <span class="bl-branch">underlined</span> = the batch\'s own branch after it · '
        '<span class="bl-struck">struck</span> = what solo wrote from there · ↵ = newline</div>'
    )
    return f'<div class="bl-texts">{"".join(lines)}</div>{legend}'


def _line(label: str, badge: str, body: str) -> str:
    return f'<div class="bl-row"><div class="bl-label">{label}{badge}</div><div class="bl-text">{body}</div></div>'


def noise_figure(solo, rows: list, label: str = "") -> go.Figure:
    """Per batch size: max |logit difference| from solo at each generated token (log axis). Exact zeros sit on
    the bottom line labelled bit-identical; the dotted line is half solo's top-1/top-2 gap, the noise a flip needs."""
    if solo is None or not rows:
        return empty_figure("Press Run: one line per batch size, how far its logits moved from solo's")
    values = [v for r in rows for v in r.noise if v is not None] + [g / 2 for g in solo.gap]
    floor, lo, hi = zero_floor(values)
    fig = go.Figure()
    steps = list(range(1, len(solo.gap) + 1))
    # an exact tie (gap 0) breaks the dotted line: it cannot be drawn on a log axis, and any noise can flip it
    fig.add_trace(
        go.Scatter(
            x=steps,
            y=[g / 2 if g > 0 else None for g in solo.gap],
            mode="lines",
            name="half solo's top-1/top-2 gap: the noise a flip needs",
            line={"color": OTHER, "dash": "dot", "width": 2},
            connectgaps=False,
            hovertemplate="token %{x}: half the gap = %{y:.3g}<extra></extra>",
        )
    )
    for i, row in enumerate(rows):
        colour = BATCH_COLOURS[i % len(BATCH_COLOURS)]
        y = [None if v is None else (v if v > 0 else floor) for v in row.noise]
        raw = ["—" if v is None else ("0 exactly" if v == 0 else f"{v:.3g}") for v in row.noise]
        fig.add_trace(
            go.Scatter(
                x=steps[: len(y)],
                y=y,
                name=row_label(row),
                mode="lines+markers",
                customdata=raw,
                line={"color": colour, "width": 2, "dash": DASHES[i % len(DASHES)]},
                connectgaps=False,
                marker={"size": 8, "symbol": SYMBOLS[i % len(SYMBOLS)], "line": {"width": 2}},
                hovertemplate=f"{row_label(row)}, token %{{x}}: noise %{{customdata}}<extra></extra>",
            )
        )
        d = row.first_divergence
        if d is not None and d < len(y) and y[d] is not None:
            fig.add_trace(
                go.Scatter(
                    x=[d + 1],
                    y=[y[d]],
                    mode="markers",
                    showlegend=False,
                    hoverinfo="skip",
                    marker={"symbol": "star", "size": 18, "color": CHOSEN, "line": {"color": colour, "width": 2}},
                )
            )
    fig.update_xaxes(title="generated token", rangemode="tozero")
    fig.update_yaxes(title="max |Δ logit| vs solo", **log_axis(floor, lo, hi, ZERO_LABEL))
    fig = styled(fig, "Logit noise per token" + (f" · {label}" if label else ""), height=420)
    fig.update_layout(legend={"y": -0.25})
    return fig


def scatter_points(rows: list) -> list[dict]:
    """Every compared step of every batch: noise, solo's gap, whether a flip was possible there (gap ≤ 2 × noise)
    and whether the token flipped."""
    return [
        {
            "batch_size": r.batch_size,
            "step": i,
            "noise": v,
            "gap": r.gap[i],
            "possible": flip_possible(r.gap[i], v),
            "flip": i == r.first_divergence,
        }
        for r in rows
        for i, v in enumerate(r.noise)
        if v is not None
    ]


def scatter_figure(rows: list, label: str = "") -> go.Figure:
    """Gap against noise for every step of every batch size, log-log, flips as big stars. On or below the line
    gap = 2 × noise a flip is possible; above it, impossible. Steps with noise exactly 0 stand on a strip left."""
    points = scatter_points(rows)
    if not points:
        return empty_figure("Press Run: every token as a point, the top-1/top-2 gap against the logit noise")
    xfloor, xlo, xhi = zero_floor([p["noise"] for p in points])
    # the y range reaches down to the line, so a run without flips shows how far above it every point sits
    yfloor, ylo, yhi = zero_floor([p["gap"] for p in points] + [2 * xlo])
    zeros, ties = any(p["noise"] == 0 for p in points), any(p["gap"] <= 0 for p in points)
    fig = go.Figure()
    line_x = [xlo / 3, max(xhi, yhi / 2) * 3]
    fig.add_trace(
        go.Scatter(
            x=line_x,
            y=[2 * v for v in line_x],
            mode="lines",
            name="gap = 2 × noise: a flip needs the gap on or below this line",
            line={"color": TEXT, "dash": "dash", "width": 2},
            hoverinfo="skip",
        )
    )
    sizes = sorted({p["batch_size"] for p in points})
    colour = {size: BATCH_COLOURS[i % len(BATCH_COLOURS)] for i, size in enumerate(sizes)}
    for k, size in enumerate(sizes):
        calm = [p for p in points if p["batch_size"] == size and not p["flip"]]
        marker = {"size": 10, "color": colour[size], "symbol": SYMBOLS[k % len(SYMBOLS)], "line": {"width": 2}}
        fig.add_trace(_points_trace(calm, f"batch {size}", marker, xfloor, yfloor))
    flips = [p for p in points if p["flip"]]
    if flips:
        outline = {"color": [colour[p["batch_size"]] for p in flips], "width": 2}
        marker = {"size": 20, "symbol": "star", "color": CHOSEN, "line": outline}
        fig.add_trace(_points_trace(flips, "★ flipped (outline: its batch)", marker, xfloor, yfloor))
    if zeros:
        fig.add_vrect(x0=xfloor / 1.8, x1=xfloor * 1.8, fillcolor=GRID, line_width=0, layer="below")
    if ties:
        fig.add_hrect(y0=yfloor / 1.8, y1=yfloor * 1.8, fillcolor=GRID, line_width=0, layer="below")
    zero_x, zero_y = ZERO_LABEL if zeros else None, TIE_LABEL if ties else None
    fig.update_xaxes(title="logit noise: max |Δ logit| vs solo", **log_axis(xfloor, xlo, xhi, zero_x))
    fig.update_yaxes(title="solo's top-1 − top-2 logit gap", **log_axis(yfloor, ylo, yhi, zero_y))
    fig = styled(fig, "Why a token flips: gap vs noise" + (f" · {label}" if label else ""), height=480)
    fig.update_layout(legend={"y": -0.22})
    return fig


def _points_trace(points: list[dict], name: str, marker: dict, xfloor: float, yfloor: float) -> go.Scatter:
    return go.Scatter(
        x=[p["noise"] if p["noise"] > 0 else xfloor for p in points],
        y=[p["gap"] if p["gap"] > 0 else yfloor for p in points],
        mode="markers",
        marker=marker,
        name=name,
        customdata=[
            [p["batch_size"], p["step"] + 1, p["noise"], p["gap"], " → flipped" if p["flip"] else ""] for p in points
        ],
        hovertemplate="batch %{customdata[0]}, token %{customdata[1]}: noise %{customdata[2]:.3g}, "
        "gap %{customdata[3]:.3g}%{customdata[4]}<extra></extra>",
    )


CSS = """
.bl-texts { display:flex; flex-direction:column; gap:6px; }
.bl-row { display:grid; grid-template-columns: 200px 1fr; gap:10px; padding:6px 0;
  border-bottom:1px solid rgba(128,128,128,.25); }
.bl-label { font-weight:600; display:flex; flex-direction:column; gap:4px; align-items:flex-start; }
.bl-text { font-size: calc(16px * var(--lab-type, 1)); line-height:1.6; white-space:pre-wrap; word-break:break-word; }
.bl-badge { white-space:nowrap; font-size: calc(12px * var(--lab-type, 1)); font-weight:600; border-radius:10px;
  padding:1px 8px; }
.bl-same { background:rgba(0,158,115,.18); border:1px solid #009E73; }
.bl-diff { background:rgba(230,159,0,.25); border:1px solid #E69F00; }
.bl-shared { opacity:.7; }  /* dimmed, still 5.6:1 on white (WCAG AA) */
.bl-flip { background:#E69F00; color:#000; border-radius:3px; padding:0 2px; font-weight:700; }
.bl-branch { text-decoration: underline; text-decoration-color:#E69F00; text-underline-offset:3px; }
.bl-solo-went { font-size: calc(14px * var(--lab-type, 1)); opacity:.7; margin-top:2px; }
.bl-struck { text-decoration: line-through; }
.bl-legend { font-size: calc(14px * var(--lab-type, 1)); margin-top:6px; }
.bl-empty { opacity:.7; padding:8px 0; }
.bl-tok:hover { outline:1px solid rgba(128,128,128,.6); }
"""
