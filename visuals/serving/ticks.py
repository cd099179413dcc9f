"""Each forward pass of the server's scheduler over the last minute: a bar as wide as the pass took, where it ran in
time, as tall as the students in it (split into those decoding one token and those reading a prompt chunk), and a
diamond (right axis) for the prompt tokens that rode along.

The chart is redrawn every 2 s on every page watching it live, so it is drawn for patching (visuals.parts): each
pass is one item of a strip, placed by its own start and length in seconds from a fixed origin (`--s`, `--l`), and
the plot's window (`--xlo`, `--xhi`) is one attribute. A refresh moves the window, drops the passes that left it from
the front of the strip and appends the new ones at its end; a pass already drawn is never sent again. The origin
steps every ORIGIN_STEP_S (the numbers stay small for the page's arithmetic), and then the view is sent whole.

Takes `decoding.serving.traffic.Tick`s; no torch, no gradio.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

from visuals.chart import Axis, Key, legend_html, lines_html, nice_axis, tick_end, ticks_html, title_html
from visuals.theme import DECODE, PREFILL

if TYPE_CHECKING:
    from decoding.serving.traffic import Tick

WINDOW_S = 60.0  # the window the line above the charts speaks of
ORIGIN_STEP_S = 600.0
TITLE = "Each forward pass: how many students shared it"
DECODING, READING, PROMPT = "decoding one token", "reading its prompt", "prompt tokens (right axis)"
HEIGHT = 150  # the plot: after Open, its button and both charts' axes share a 1280x720 screen
X_TICKS = (-60, -45, -30, -15, 0)  # seconds before now, fixed under the moving window


def origin_for(now: float, window_s: float = WINDOW_S) -> float:
    """The fixed point the passes are placed from: a whole ORIGIN_STEP_S at or before the window's start."""
    return math.floor((now - window_s) / ORIGIN_STEP_S) * ORIGIN_STEP_S


def shown(ticks: list[Tick], now: float, window_s: float = WINDOW_S) -> list[Tick]:
    """The passes that ended within the window, oldest first."""
    return sorted((t for t in ticks if 0 <= now - t.at <= window_s), key=lambda t: t.at)


def pass_html(t: Tick, origin: float) -> str:
    """One pass: its box placed in time (start and length, from `origin`), its bars stacked in it, its diamond."""
    start, length = t.at - t.ms / 1e3 - origin, t.ms / 1e3
    reading = t.rows - t.decode_rows
    hover = html.escape(
        f"{t.rows} students, {t.mode}: {t.decode_rows} decoding, {t.prefill_tokens} prompt tokens, {t.ms:.0f} ms"
    )
    # what the tests read: the pass's end (seconds from the origin) and its numbers
    data = f"data-x=\"{t.at - origin:.3f}\" data-c='[{t.rows}, {t.decode_rows}, {t.prefill_tokens}, {t.ms:.1f}]'"
    bars = (
        f'<i class="lc-bar" data-series="{DECODING}" data-y="{t.decode_rows}" {data} '
        f'style="--c:{DECODE};--b:0;--v:{t.decode_rows}"></i>'
    )
    if reading:
        bars += (
            f'<i class="lc-bar" data-series="{READING}" data-y="{reading}" {data} '
            f'style="--c:{PREFILL};--b:{t.decode_rows};--v:{reading}"></i>'
        )
    if t.prefill_tokens:
        bars += (
            f'<i class="serving-diamond" data-series="{PROMPT}" data-y="{t.prefill_tokens}" {data} '
            f'style="--v2:{t.prefill_tokens}"></i>'
        )
    return f'<div class="serving-pass" title="{hover}" style="--s:{start:.3f};--l:{length:.3f}">{bars}</div>'


def window_style(now: float, origin: float, y: Axis, y2: Axis | None, window_s: float = WINDOW_S) -> str:
    """The plot's window in time and its two ranges: what a refresh moves."""
    right = f";--hi2:{y2.hi:g}" if y2 is not None else ";--hi2:1"
    return f"--lo:0;--hi:{y.hi:g};--xlo:{now - window_s - origin:.3f};--xhi:{now - origin:.3f}{right}"


def axes(passes: list[Tick]) -> tuple[Axis, Axis | None]:
    """Students on the left (whole students); prompt tokens on the right, only when some pass read a prompt."""
    y = nice_axis(max((t.rows for t in passes), default=1), title="students")
    if y.hi <= 5:  # whole students: one pass size alone drew 0.2, 0.4, ... students
        y = Axis(0, max(y.hi, 1), tuple(range(int(max(y.hi, 1)) + 1)), "students")
    prompt = max((t.prefill_tokens for t in passes), default=0)
    return y, (nice_axis(prompt, title="prompt tokens") if prompt else None)


def legend(prompts: bool) -> str:
    keys = [Key(DECODING, DECODE), Key(READING, PREFILL)]
    if prompts:
        keys.append(Key(PROMPT, PREFILL, "diamond"))
    return legend_html(keys)


def ticks_chart(passes: list[Tick], now: float, origin: float, window_s: float = WINDOW_S) -> dict:
    """The chart's parts: its frame (HTML with the strip's place empty), the strip's items, and what a refresh
    replaces (the axes, the legend, the window)."""
    y, y2 = axes(passes)
    labels = "".join(
        f'<span style="left:{(x + window_s) / window_s:.2%}"{tick_end(x + window_s, window_s)}>{x}</span>'
        for x in X_TICKS
        if -x <= window_s
    )
    parts = {
        "items": tuple(pass_html(t, origin) for t in passes),
        "legend": legend(y2 is not None),
        "y": ticks_html(y),
        "y2": ticks_html(y2) if y2 is not None else "",
        "lines": lines_html(y),
        "style": window_style(now, origin, y, y2, window_s),
    }
    parts["html"] = (
        f'<figure class="lc serving-ticks-chart" style="--plot-h:{HEIGHT}px">{title_html(TITLE)}'
        f'<div class="serving-legend">{parts["legend"]}</div><div class="lc-grid">'
        f'<div class="lc-ytitle"><span>students</span></div><div class="lc-y">{parts["y"]}</div>'
        f'<div class="lc-plot" style="{parts["style"]}"><div class="lc-lines">{parts["lines"]}</div>'
        f'<div class="serving-passes">{"".join(parts["items"])}</div></div>'
        f'<div class="lc-y2">{parts["y2"]}</div><div class="serving-xticks">{labels}</div></div>'
        '<div class="lc-xtitle">seconds before now</div></figure>'
    )
    return parts


# a pass's box by its start and length in the window (at least 2 px: a 30 ms pass still shows); its bars and its
# diamond by the plot's two ranges
CSS = f"""
.serving-passes {{ position: absolute; inset: 0; overflow: hidden; }}
.serving-pass {{ position: absolute; top: 0; bottom: 0;
  left: calc((var(--s) - var(--xlo)) / (var(--xhi) - var(--xlo)) * 100%);
  width: max(calc(var(--l) / (var(--xhi) - var(--xlo)) * 100%), 2px); }}
.serving-pass .lc-bar {{ left: 0; right: 0; }}
.serving-diamond {{ position: absolute; left: 50%; width: 9px; height: 9px; margin: 0 0 -4.5px -4.5px;
  bottom: calc(var(--v2) / var(--hi2) * 100%); background: {PREFILL}; border: 1px solid #fff;
  transform: rotate(45deg); z-index: 1; }}
.lc-key.lc-k-diamond {{ width: 8px; height: 8px; transform: rotate(45deg); margin: 0 2px; }}
.serving-xticks {{ grid-area: 2 / 3; position: relative; height: 1.4em; font-size: 0.85em; }}
.serving-xticks span {{ position: absolute; top: 2px; transform: translateX(-50%); white-space: nowrap; }}
.serving-xticks span.lc-at-start {{ transform: none; }}
.serving-xticks span.lc-at-end {{ transform: translateX(-100%); }}
/* the legend's own margin clears the top tick's label (half of it stands above the plot): on the wrapper, as the
   page's prose rules take the margin off a block's last child */
.serving-legend {{ margin: 0 0 0.8em; }}
.serving-legend .lc-legend {{ margin: 0; }}
"""
