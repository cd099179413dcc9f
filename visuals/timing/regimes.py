"""The regime map's chart and sentences: decode ms per token against the bytes of weights a step reads, one dot per
model size and path, beside the line bytes ÷ bandwidth (the floor). Dots on the line: bound by the bytes. Dots
flat above it as the bytes shrink: bound by something else (on a GPU, launching the step's kernels one by one).

Plain data in (the dicts of `decoding.timing.regimes.Point`, as `dataclasses.asdict` writes them), no torch.
"""

import numpy as np
import plotly.graph_objects as go

from decoding.timing.roofline import floor_ms
from visuals.log_axis import log_ticks
from visuals.machine import machine_gbs
from visuals.theme import DECODE, OTHER, empty_figure, ink, measured_title, styled

PATH_LOOK = {  # path: (legend name, colour, marker, where its sizes' names go: None for none)
    "eager": ("eager step", DECODE, "circle", "top center"),
    # unnamed: its dots sit between the other two at the same sizes, and three names per size would overlap
    "static": ("static step (uncaptured)", "#CC79A7", "square", None),
    "captured": ("captured step (a CUDA graph)", "#D55E00", "diamond", "bottom center"),
}
LINE_NAME = "the floor: bytes ÷ bandwidth"  # short names: the legend stays one row at 800 px and in projector mode
RANDOM_WEIGHTS = (
    "The larger models are built with **random weights** (nothing is downloaded). That is fair for a timing: a decode "
    "step reads every weight once and does the same multiply-adds whatever their values, so random weights take "
    "the time real ones do. `bench/gpu_decode.py` checks it on the bundled shape, real weights beside random ones."
)


def regime_figure(points: list[dict], bandwidth_gbs: float, label: str) -> go.Figure:
    """`points`: dicts with size, path, weight_bytes, decode_ms_per_token, mbu, ms (raw); `label` names the device
    and dtype they were measured with."""
    if not points or not bandwidth_gbs:
        return empty_figure("Press Map the regimes to time decode at growing model size")
    gb = [p["weight_bytes"] / 1e9 for p in points]
    lo, hi = min(gb) / 2, max(gb) * 2  # room for a size's name centred over its dot, at 800 px too
    x = np.geomspace(lo, hi, 50)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=x,
            y=[floor_ms(v * 1e9, bandwidth_gbs) for v in x],
            name=f"{LINE_NAME} ({machine_gbs(bandwidth_gbs)})",
            mode="lines",
            line={"color": OTHER, "dash": "dash", "width": 2},
            hovertemplate="%{x:.2f} GB read at full bandwidth: %{y:.1f} ms<extra></extra>",
        )
    )
    for path, (name, colour, symbol, names_at) in PATH_LOOK.items():
        mine = sorted((p for p in points if p["path"] == path), key=lambda p: p["weight_bytes"])
        if not mine:
            continue
        fig.add_trace(
            go.Scatter(
                x=[p["weight_bytes"] / 1e9 for p in mine],
                y=[p["decode_ms_per_token"] for p in mine],
                name=name,
                mode="lines+markers+text" if names_at else "lines+markers",
                line={"color": colour, "width": 2},
                marker={"color": colour, "size": 12, "symbol": symbol, "line": {"width": 1, "color": "white"}},
                text=[p["size"] for p in mine],
                # centred: a name to one side of the first or last dot ran past the plot area and was clipped
                textposition=names_at or "top center",
                textfont={"color": ink(colour), "size": 12},
                customdata=[[p["mbu"] * 100, len(p["ms"])] for p in mine],
                hovertemplate="%{text}: %{y:.1f} ms per token (median of %{customdata[1]})<br>"
                "%{x:.2f} GB of weights, MBU %{customdata[0]:.0f}%<extra>" + path + "</extra>",
            )
        )
    ys = [p["decode_ms_per_token"] for p in points] + [floor_ms(v * 1e9, bandwidth_gbs) for v in (lo, hi)]
    bottom, top = min(ys) / 1.3, max(ys) * 2  # room above the highest dot for its name
    fig.update_xaxes(type="log", title="weights read per decode step (GB)", tickvals=log_ticks(lo, hi))
    fig.update_yaxes(type="log", title="ms per token", tickvals=log_ticks(bottom, top), range=np.log10([bottom, top]))
    # the legend in the plot's top-left corner, which the map leaves empty (time grows with the bytes): below the
    # plot, three paths in projector mode's larger text ran into the x-axis title
    legend = {"orientation": "v", "x": 0.01, "y": 0.99, "xanchor": "left", "yanchor": "top"}
    styled(fig, None, height=460).update_layout(legend=legend | {"bgcolor": "rgba(255,255,255,0.85)"})
    return measured_title(fig, "Regime map: decode time against weight bytes", label)


def regime_caption(points: list[dict], bandwidth_gbs: float, skipped: list[str], cancelled: bool, device: str) -> str:
    """What the map shows, per path: how ms per token grew against the bytes, and the MBU of the largest size.
    `skipped`: "size: why" for each size left out; `device`: "cpu" or "cuda"."""
    if not points:
        return "*Cancelled before the first size was timed.*" if cancelled else ""
    said = []
    for path, (name, *_) in PATH_LOOK.items():
        mine = sorted((p for p in points if p["path"] == path), key=lambda p: p["weight_bytes"])
        if not mine:
            continue
        first, last = mine[0], mine[-1]
        head = f"The {name.split(' (')[0]}: {first['decode_ms_per_token']:.1f} ms per token at {first['size']}"
        if len(mine) == 1:
            said.append(f"{head}, {first['mbu']:.0%} of this machine's {machine_gbs(bandwidth_gbs)} copy bandwidth.")
            continue
        grew = last["decode_ms_per_token"] / first["decode_ms_per_token"]
        more = last["weight_bytes"] / first["weight_bytes"]
        said.append(
            f"{head}, {last['decode_ms_per_token']:.1f} ms at {last['size']} ({more:.0f}× the bytes, {grew:.1f}× the "
            f"time, {last['mbu']:.0%} of this machine's {machine_gbs(bandwidth_gbs)} copy bandwidth): "
            f"{_bound(grew, more, device)}."
        )
    said += _split(points)
    if skipped:
        said.append("Left out: " + "; ".join(_grouped(skipped)) + ".")
    if cancelled:
        said.append("*Cancelled: the sizes above are those timed before.*")
    return " ".join(said)


def _split(points: list[dict]) -> list[str]:
    """The static step's gain over the eager one split in two, at the smallest size timed statically: the static
    cache's part (eager ÷ static) and the graph's (static ÷ captured)."""
    static = [p for p in points if p["path"] == "static"]
    if not static:
        return []
    size = min(static, key=lambda p: p["weight_bytes"])["size"]
    at = {p["path"]: p["decode_ms_per_token"] for p in points if p["size"] == size}
    if "eager" not in at:
        return []
    said = f"At {size} the static cache alone makes a step {at['eager'] / at['static']:.1f}× as fast as eager"
    if "captured" in at:
        said += f"; capturing it as one graph, {at['static'] / at['captured']:.1f}× again"
    return [said + "."]


def _bound(grew: float, more: float, device: str) -> str:
    """Which bound a path's time follows, from how it grew beside the bytes (on log axes: its slope)."""
    slope = np.log(grew) / np.log(more)
    other = "launching its kernels one by one" if device == "cuda" else "Python and each operator's own overhead"
    if slope >= 0.7:
        return "its time follows the bytes, so the bytes bound it"
    if slope <= 0.3:
        return f"its time barely follows the bytes: something else bounds it ({other}, or other work on the machine)"
    return f"its time follows the bytes only in part: the bytes bound the larger sizes, {other} the smaller"


def _grouped(skipped: list[str]) -> list[str]:
    """ "a: why", "b: why" as "a, b (why)": one reason, said once."""
    reasons: dict[str, list[str]] = {}
    for line in skipped:
        name, why = line.split(": ", 1)
        reasons.setdefault(why, []).append(name)
    return [f"{', '.join(names)} ({why})" for why, names in reasons.items()]
