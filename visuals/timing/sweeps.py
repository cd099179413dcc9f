"""Timing charts of the prefill vs decode lab: each takes raw times (ms) and draws the median with its spread.

prefill vs prompt length · decode step vs context · naive loop vs KV cache (per step and cumulative)
· one decode step vs batch size · the timeline of one request (prefill, then decode steps).
"""

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from visuals.log_axis import log_ticks
from visuals.theme import DECODE, OTHER, PREFILL, SERIES, empty_figure, ink, measured_title, styled


def _stats(runs: list[list[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median, and distance down to the fastest and up to the slowest run, per setting."""
    med = np.array([np.median(r) for r in runs])
    return med, med - np.array([min(r) for r in runs]), np.array([max(r) for r in runs]) - med


def _median_trace(x, runs, name, colour, unit="ms", symbol="circle") -> go.Scatter:
    med, down, up = _stats(runs)
    return go.Scatter(
        x=x,
        y=med,
        name=name,
        mode="lines+markers",
        line={"color": colour, "width": 3},
        marker={"size": 9, "symbol": symbol},
        error_y={"type": "data", "array": up, "arrayminus": down, "color": colour, "thickness": 1.5},
        customdata=[[len(r)] for r in runs],
        hovertemplate=f"%{{x}}: median %{{y:.1f}} {unit} over %{{customdata[0]}} runs<extra>{name}</extra>",
    )


def phases_figure(prefill_x, prefill_runs, decode_x, decode_runs, label: str) -> go.Figure:
    """Left: prefill time against prompt length, next to reading the same prompt one decode step per token.
    Right: one decode step against the context it attends to."""
    if not prefill_runs:
        return empty_figure("Press Measure to time prefill and decode on this machine")
    step = float(np.median(decode_runs[0])) if decode_runs else 0.0
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=("prefill: the whole prompt in one pass", "decode: one token, with the KV cache"),
    )
    fig.add_trace(_median_trace(prefill_x, prefill_runs, "prefill", PREFILL, symbol="square"), row=1, col=1)
    if decode_runs:
        fig.add_trace(
            go.Scatter(
                x=prefill_x,
                y=np.array(prefill_x) * step,
                name="the prompt fed one decode step per token",
                mode="lines",
                line={"color": DECODE, "dash": "dash", "width": 2},
                hovertemplate="%{x} tokens × one decode step = %{y:.0f} ms<extra></extra>",
            ),
            row=1,
            col=1,
        )
        fig.add_trace(_median_trace(decode_x, decode_runs, "decode step", DECODE), row=1, col=2)
    fig.update_xaxes(type="log", title="prompt tokens", tickvals=prefill_x, row=1, col=1)
    fig.update_xaxes(type="log", title="context tokens", tickvals=decode_x, row=1, col=2)
    top = max(max(max(r) for r in prefill_runs), prefill_x[-1] * step if decode_runs else 0)
    fig.update_yaxes(type="log", title="ms", tickvals=log_ticks(min(min(r) for r in prefill_runs), top), row=1, col=1)
    fig.update_yaxes(title="ms per step", rangemode="tozero", row=1, col=2)
    return measured_title(styled(fig, None, height=420), "Prefill and decode", label)


def cache_figure(context: list[int], naive_ms: list[float], cached_ms: list[float], label: str) -> go.Figure:
    """The same greedy run without and with a KV cache: time per step, and running total."""
    if not naive_ms:
        return empty_figure("Press Measure to race the naive loop against the KV cache")
    tokens = np.arange(1, len(naive_ms) + 1)
    fig = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.12, subplot_titles=("time per output token", "total time so far")
    )
    for name, ms, colour in (("no cache: re-run everything", naive_ms, OTHER), ("KV cache", cached_ms, DECODE)):
        hover = "token %{x} (context %{customdata}): %{y:.0f} ms<extra>" + name + "</extra>"
        line = {"color": colour, "width": 3}
        fig.add_trace(
            go.Scatter(
                x=tokens, y=ms, name=name, mode="lines+markers", line=line, customdata=context, hovertemplate=hover
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=tokens,
                y=np.cumsum(ms) / 1e3,
                name=name,
                mode="lines",
                line=line,
                showlegend=False,
                hovertemplate="after %{x} tokens: %{y:.2f} s<extra>" + name + "</extra>",
            ),
            row=1,
            col=2,
        )
    fig.update_xaxes(title="output token", row=1, col=1)
    fig.update_xaxes(title="output tokens", row=1, col=2)
    fig.update_yaxes(title="ms", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title="s", rangemode="tozero", row=1, col=2)
    return measured_title(styled(fig, None, height=400), "KV cache vs re-running the sequence", label)


def batch_figure(batches: list[int], runs: list[list[float]], label: str) -> go.Figure:
    """One decode step for B sequences: its time (left axis) and the tokens per second it yields (right)."""
    if not runs:
        return empty_figure("Press Measure to time one decode step at growing batch sizes")
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    med, names = np.array([np.median(r) for r in runs]), [str(b) for b in batches]
    fig.add_trace(
        go.Bar(
            x=names,
            y=np.array(batches) / med * 1e3,
            name="tokens per second",
            marker_color=SERIES[1],
            opacity=0.35,
            hovertemplate="batch %{x}: %{y:.0f} tokens/s<extra></extra>",
        ),
        secondary_y=True,
    )
    fig.add_trace(_median_trace(names, runs, "ms per decode step", DECODE), secondary_y=False)
    fig.update_xaxes(type="category", title="batch size (sequences decoded together)")
    fig.update_yaxes(title="ms per step", rangemode="tozero", secondary_y=False)
    fig.update_yaxes(title="tokens / s", rangemode="tozero", showgrid=False, secondary_y=True)
    return measured_title(styled(fig, None, height=400), "Batching amortises the weight reads", label)


def request_figure(prefill_ms: float, decode_ms: list[float], prompt_tokens: int, label: str) -> go.Figure:
    """One request on a time axis: the prefill block, then each decode step as its own segment."""
    if prefill_ms is None:
        return empty_figure("Press Measure to time one whole request")
    starts = np.concatenate([[0.0, prefill_ms], prefill_ms + np.cumsum(decode_ms)[:-1]]) if decode_ms else [0.0]
    widths = [prefill_ms, *decode_ms]
    names = [f"prefill ({prompt_tokens} prompt tokens) → token 1"] + [
        f"decode → token {i + 2}" for i in range(len(decode_ms))
    ]
    colours = [PREFILL] + [DECODE if i % 2 == 0 else SERIES[5] for i in range(len(decode_ms))]
    fig = go.Figure(
        go.Bar(
            y=["request"] * len(widths),
            x=widths,
            base=starts,
            orientation="h",
            marker_color=colours,
            marker_line={"width": 0},
            customdata=names,
            hovertemplate="%{customdata}<br>%{base:.0f} → %{x:.0f} ms long<extra></extra>",
            showlegend=False,
        )
    )
    above = {"y": 1, "yref": "paper", "yanchor": "bottom", "showarrow": False}
    prefill_text = f"<b>prefill</b> {prefill_ms:.0f} ms"
    fig.add_annotation(x=prefill_ms / 2, text=prefill_text, font={"color": ink(PREFILL)}, **above)
    if decode_ms:
        text = f"<b>{len(decode_ms)} decode steps</b> {sum(decode_ms):.0f} ms"
        fig.add_annotation(x=prefill_ms + sum(decode_ms) / 2, text=text, font={"color": ink(DECODE)}, **above)
    fig.add_vline(x=prefill_ms, line={"dash": "dot", "color": PREFILL, "width": 2})
    fig.update_xaxes(title="ms since the request arrived", rangemode="tozero")
    fig.update_yaxes(visible=False)
    fig = measured_title(styled(fig, None, height=250), "One request, start to end", label)
    fig.update_layout(margin={"t": 110}, bargap=0.35)  # the title's two lines, then the phases' names above the bars
    return fig
