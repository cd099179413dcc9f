"""The roofline chart: attainable FLOP/s against arithmetic intensity, on log-log axes.

Left of the ridge point the sloped line (the measured memory bandwidth) is the limit; right of it the
flat line (the measured matmul peak). Each measured forward pass is a dot at its intensity and the
FLOP/s it achieved: decode at batch 1 sits far left on the slope, and moves right as the batch grows;
prefill of a long prompt sits near the ceiling.
"""

import numpy as np
import plotly.graph_objects as go

from decoding.timing.roofline import attainable_flops, ridge_point
from visuals.log_axis import log_ticks
from visuals.machine import machine_gbs, machine_gflops
from visuals.theme import DECODE, OTHER, PREFILL, TEXT, empty_figure, ink, measured_title, styled


def roofline_figure(points: list[dict], bandwidth_gbs: float, peak_tflops: float, label: str) -> go.Figure:
    """`points`: dicts with phase ('prefill' | 'decode'), x (tokens or batch), intensity (FLOP/byte),
    flops_per_s and ms; `label` names the device, dtype and model the numbers came from."""
    if not points or not bandwidth_gbs or not peak_tflops:
        return empty_figure("Press Measure to place prefill and decode on this machine's roofline")
    bandwidth, peak = bandwidth_gbs * 1e9, peak_tflops * 1e12
    ridge = ridge_point(peak, bandwidth)
    intensities = [p["intensity"] for p in points] + [ridge]
    lo, hi = min(intensities) / 3, max(intensities) * 3
    x = np.geomspace(lo, hi, 200)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=x,
            y=[attainable_flops(i, peak, bandwidth) / 1e9 for i in x],
            mode="lines",
            line={"color": OTHER, "width": 3},
            name=f"roofline: {machine_gbs(bandwidth_gbs)} slope, {machine_gflops(peak_tflops)} ceiling",
            hovertemplate="intensity %{x:.2f} FLOP/byte<br>at most %{y:.1f} GFLOP/s<extra></extra>",
        )
    )
    for phase, colour, symbol, tag in (("prefill", PREFILL, "square", "{} tok"), ("decode", DECODE, "circle", "b={}")):
        mine = [p for p in points if p["phase"] == phase]
        if not mine:
            continue
        fig.add_trace(
            go.Scatter(
                x=[p["intensity"] for p in mine],
                y=[p["flops_per_s"] / 1e9 for p in mine],
                mode="markers+text",
                marker={"color": colour, "size": 12, "symbol": symbol, "line": {"width": 1, "color": "white"}},
                text=[tag.format(p["x"]) for p in mine],
                textposition="top center" if phase == "decode" else "bottom center",
                textfont={"color": ink(colour), "size": 12},
                name="prefill (prompt tokens)" if phase == "prefill" else "decode step (batch size)",
                customdata=[[p["x"], p["ms"]] for p in mine],
                hovertemplate=f"{phase} %{{customdata[0]}}: %{{customdata[1]:.1f}} ms<br>"
                "%{x:.2f} FLOP/byte, %{y:.2f} GFLOP/s<extra></extra>",
            )
        )
    fig.add_vline(x=ridge, line={"dash": "dot", "color": TEXT, "width": 1})
    _note(fig, np.log10(ridge), f"ridge {ridge:.1f} FLOP/byte", "left")
    _note(fig, np.log10(lo * 1.3), "← memory-bound", "left")
    _note(fig, np.log10(hi / 1.3), "compute-bound →", "right")
    ys = [p["flops_per_s"] / 1e9 for p in points] + [peak / 1e9, bandwidth * lo / 1e9]
    fig.update_xaxes(type="log", title="arithmetic intensity (FLOPs per byte read)", tickvals=log_ticks(lo, hi))
    fig.update_yaxes(type="log", title="achieved GFLOP/s", tickvals=log_ticks(min(ys), max(ys)))
    return measured_title(styled(fig, None, height=440), "Roofline", label)


def _note(fig: go.Figure, x: float, text: str, xanchor: str) -> None:
    """A label along the top of the chart, at `x` on the log axis (plotly places annotations by log10 there)."""
    fig.add_annotation(
        x=x,
        y=1,
        yref="paper",
        text=text,
        showarrow=False,
        xanchor=xanchor,
        yanchor="top",
        font={"size": 12, "color": TEXT},
    )
