"""Continuous batching, read from this server's own traffic: who shared each forward pass, and what it cost.

Decode is memory-bound: a pass reads every weight once, whether it computes the next token of one student or of
thirty. So the scheduler packs every waiting student's next token (and chunks of new prompts) into one pass, and
the pass grows only a little slower as it fills: tick time against batch size is the decode roofline, measured on
live traffic. Batched logits differ from a solo pass by float noise, so a pick whose top-two gap is within twice
that noise could have gone the other way. Ticks, summaries and the noise are `decoding.serving`'s plain data.

The prefix cache (decoding.serving.prefix) is drawn as what each live session's cache is made of: its prompt's
blocks, copied from the pool (shared) or computed by the session itself, each with its short hash, then the tokens
it generated. Its numbers say how much prompt was not computed, and what the blocks cost in memory.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from decoding.nondeterminism.flips import flip_possible
from decoding.passes import KINDS, MODES
from visuals.glossary import term
from visuals.theme import DECODE, KEPT, OTHER, PREFILL, TEXT, empty_figure, styled
from visuals.words import count

if TYPE_CHECKING:
    from decoding.serving.prefix import PrefixStats, SessionBlocks
    from decoding.serving.scheduler import Noise
    from decoding.serving.traffic import Tick

WINDOW_S = 120.0  # the tick figure's look-back
MIN_BAR_S = 0.4  # a 30 ms pass still shows as a bar two minutes wide
# a static run's one-token pass by its kind (decoding.passes.KINDS): always a pass of its own, no batchmate to warn of
STATIC_STEPS = {"static": "uncaptured", "captured": "replayed as a CUDA graph"}
SHORT_HASH = 6  # hex digits of a block's hash on the chart
BLOCK_ROWS = 12  # sessions drawn; the title counts the rest
SHARED, COMPUTED, GENERATED = KEPT, PREFILL, OTHER  # a block copied from the pool, one computed, generated tokens
# two short lines: a half-width chart in projector mode cuts a long one; the controls sit above the charts
NO_TRAFFIC = "No traffic yet: open simulated students above,<br>or press Step in another tab"


def ticks_figure(ticks: list[Tick], now: float, window_s: float = WINDOW_S) -> go.Figure:
    """One bar per forward pass, as wide as it took, at when it ended (seconds before `now`): its height is the
    students in it, split into those decoding one token and those reading a prompt chunk; the diamonds (right
    axis) are the prompt tokens that rode along."""
    shown = [t for t in ticks if 0 <= now - t.at <= window_s]
    if not shown:
        return empty_figure(NO_TRAFFIC, height=320)
    width = [max(t.ms / 1e3, MIN_BAR_S) for t in shown]
    x = [t.at - now - w / 2 for t, w in zip(shown, width)]  # the bar ends when the pass ended
    hover = [[t.rows, t.decode_rows, t.prefill_tokens, t.ms, t.mode] for t in shown]
    template = (
        "%{customdata[0]} students, %{customdata[4]}: %{customdata[1]} decoding, "
        "%{customdata[2]} prompt tokens, %{customdata[3]:.0f} ms<extra></extra>"
    )
    prefilling = any(t.prefill_tokens for t in shown)
    fig = make_subplots(specs=[[{"secondary_y": prefilling}]])
    fig.add_bar(
        x=x,
        y=[t.decode_rows for t in shown],
        width=width,
        name="decoding one token",
        marker_color=DECODE,
        customdata=hover,
        hovertemplate=template,
    )
    fig.add_bar(
        x=x,
        y=[t.rows - t.decode_rows for t in shown],
        width=width,
        name="reading its prompt",
        marker_color=PREFILL,
        customdata=hover,
        hovertemplate=template,
    )
    if prefilling:
        chunks = [(xi, t) for xi, t in zip(x, shown) if t.prefill_tokens]
        fig.add_scatter(
            x=[xi for xi, _ in chunks],
            y=[t.prefill_tokens for _, t in chunks],
            mode="markers",
            marker={"symbol": "diamond", "size": 9, "color": PREFILL, "line": {"width": 1, "color": "white"}},
            name="prompt tokens (right axis)",
            secondary_y=True,
            hovertemplate="%{y} prompt tokens<extra></extra>",
        )
        fig.update_yaxes(title_text="prompt tokens", rangemode="tozero", showgrid=False, secondary_y=True)
    fig.update_layout(barmode="stack", bargap=0)
    fig.update_xaxes(title_text="seconds before now", range=[-window_s, 0])
    fig.update_yaxes(title_text="students", rangemode="tozero", secondary_y=False)
    fig = styled(fig, "Each forward pass: how many students shared it", height=380)
    # the legend below the x-axis title, in one row where it fits
    legend = {"orientation": "h", "x": 0, "y": -0.32, "yanchor": "top"}
    fig.update_layout(margin={"r": 70 if prefilling else 20, "b": 110}, legend=legend)
    return fig


def tick_time_figure(summary: dict, solo_ms: float | None = None) -> go.Figure:
    """Median time of a pass against the students in it (marker area: how many passes had that size), beside
    the dashed line of the same students one after another: rows × the time of a 1-student pass."""
    by_rows = {int(r): ms for r, ms in summary.get("median_ms_by_rows", {}).items()}
    if not by_rows:
        return empty_figure(NO_TRAFFIC, height=320)
    counts = {int(r): n for r, n in summary.get("rows_histogram", {}).items()}
    rows, ms = sorted(by_rows), [by_rows[r] for r in sorted(by_rows)]
    most = max(counts.values(), default=1)
    fig = go.Figure()
    one = by_rows.get(1, solo_ms)
    if one:
        fig.add_scatter(
            x=[1, max(rows)],
            y=[one, max(rows) * one],
            mode="lines",
            line={"color": OTHER, "dash": "dash", "width": 3},
            name=f"one after another: students × {_num(one)} ms",
            hovertemplate="%{x} students one at a time: %{y:.0f} ms<extra></extra>",
        )
    fig.add_scatter(
        x=rows,
        y=ms,
        mode="lines+markers",
        line={"color": DECODE, "width": 2},
        name="one packed pass (median)",
        marker={
            "color": DECODE,
            "size": [10 + 20 * math.sqrt(counts.get(r, 0) / most) for r in rows],
            "line": {"width": 1, "color": "white"},
        },
        customdata=[[counts.get(r, 0), m / r] for r, m in zip(rows, ms)],
        hovertemplate="%{x} students: %{y:.0f} ms over %{customdata[0]} passes, "
        "%{customdata[1]:.1f} ms per student<extra></extra>",
    )
    big = max(rows)
    note = f"{count(big, 'student')}: {_num(by_rows[big] / big)} ms per token"
    if one and big > 1:
        note += f"<br>alone: {_num(one)} ms per token"
    # in the top-left corner, clear of both lines (they start low on the left): beside the point it sat on the
    # dashed line
    fig.add_annotation(
        x=0.02,
        y=0.98,
        xref="paper",
        yref="paper",
        text=note,
        showarrow=False,
        xanchor="left",
        yanchor="top",
        align="left",
        bgcolor="rgba(255,255,255,0.8)",
        font={"size": 13, "color": TEXT},
    )
    # whole students on the axis (one pass size alone drew 0.2, 0.4, ... students)
    fig.update_xaxes(title_text="students in one forward pass", rangemode="tozero", dtick=1 if big <= 12 else None)
    fig.update_yaxes(title_text="time of the pass (ms)", rangemode="tozero")
    fig = styled(fig, "The decode roofline, from this server's own traffic", height=340)
    # the legend hangs from its top, below the axis title (anchored at its bottom, its two rows rose onto the title)
    fig.update_layout(legend={"y": -0.35, "yanchor": "top"}, margin={"b": 120})
    return fig


def traffic_markdown(summary: dict, noise: Noise | None, holder_text: str | None = None) -> str:
    """What the numbers say, in a few sentences; `holder_text` (who has the model now) is shown as given."""
    window = f"{summary.get('window_s', 0):.0f}"
    lines = []
    if not summary.get("ticks"):
        lines.append(f"No forward passes in the last {window} s.")
    else:
        n = summary["ticks"]
        lines.append(
            f"In the last {window} s: {n} forward pass{'' if n == 1 else 'es'}, "
            f"{summary['mean_rows']:.1f} students per pass on average, "
            f"{_num(summary['tokens_per_s'])} tokens/s for the whole server; "
            f"the model was busy {min(summary['busy'], 1.0):.0%} of the time."
        )
    by_rows = {int(r): ms for r, ms in summary.get("median_ms_by_rows", {}).items()}
    big = max(by_rows, default=0)
    if 1 in by_rows and big > 1:
        one = by_rows[1]
        lines.append(
            f"One pass for {big} students took {_num(by_rows[big])} ms; one after another they would have "
            f"taken {big} × {_num(one)} = {_num(big * one)} ms: {shared_verdict(by_rows[big], big * one)}."
        )
    if noise is not None and noise.value == 0:
        lines.append(
            f"Batched logits are bit-identical to a solo pass ({noise.dtype}, measured on this server at "
            "start): sharing a pass cannot change a pick here."
        )
    elif noise is not None:
        lines.append(
            f"Batched logits differ from a solo pass by up to {term('batching noise', _small(noise.value))} "
            f"({noise.dtype}, measured on this "
            "server at start): a step whose top-two gap is within twice that could have picked the other token."
        )
    text = " ".join(lines)
    return f"{text}\n\n{holder_text}" if holder_text else text


def pass_caption(
    rows: int, ms: float, mode: str, noise: float | None, gap: float | None = None, kind: str = "eager"
) -> str:
    """The note under one step: how its forward pass ran (`mode`, what batched it; `kind`, what ran: the words of
    decoding.passes), and whether a batchmate could have flipped its pick."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind in STATIC_STEPS:
        return f"computed alone by the static cache's step, {STATIC_STEPS[kind]}: {_num(ms)} ms"
    if mode == "alone":
        return f"computed alone, as you asked: {term('bit-exact with generate()')}, {_num(ms)} ms"
    if mode == "lens":  # the lens panel's pass: the step chose from its logits, so its time is this step's
        return f"the lens pass, a pass of its own over this position with every layer's hidden state: {_num(ms)} ms"
    if mode == "cached":
        return (
            f"not computed: your whole prompt was in the server's {term('prefix cache')}, its keys and values copied "
            f"in {_num(ms)} ms; these are the logits its first computation got"
            + (f" (a pass shared by {rows} sessions)" if rows > 1 else " (a pass of its own)")
        )
    if mode == "prefix":
        text = (
            f"the start of your prompt came from the server's {term('prefix cache')} (copied, not computed), the rest "
            f"computed against it{f' with {rows - 1} others' if rows > 1 else ''}: {_num(ms)} ms. That can differ "
            "from one pass over the whole prompt by float noise, as batching does"
        )
        if gap is not None and flip_possible(gap, noise):
            text += f" — the top two were {_small(gap)} apart, within that noise: this pick could have flipped"
        return text
    if mode == "solo" or rows <= 1:
        return f"computed alone (nobody else was stepping): {_num(ms)} ms"
    others = rows - 1
    text = f"computed with {others} other session{'' if others == 1 else 's'}: batch {rows}, {_num(ms)} ms"
    if gap is not None and flip_possible(gap, noise):
        text += (
            f" — the top two were {_small(gap)} apart, within the batching noise: "
            "a batchmate could have flipped this pick"
        )
    return text


class _Drawn(NamedTuple):
    """One stretch of a session's cache on the blocks chart."""

    row: str
    start: int
    length: int
    text: str
    hover: str


def blocks_figure(sessions: list[SessionBlocks]) -> go.Figure:
    """Each live session's KV cache as its blocks, one row per session: prompt blocks copied from the pool
    (shared), prompt blocks it computed, then what it generated; each prompt block labelled with its short hash.
    The newest BLOCK_ROWS sessions are drawn, those holding the same blocks next to each other."""
    if not sessions:
        return empty_figure("No session holds a cache yet: open simulated students above,<br>or press Prefill", 300)
    # the newest sessions (the class just opened, a Prefill just pressed): `sessions` comes oldest first
    ordered = sorted(sessions[-BLOCK_ROWS:], key=lambda s: (s.hashes, s.tokens))
    labels = [f"session {i + 1}" for i in range(len(ordered))]
    parts: dict[str, list[_Drawn]] = {SHARED: [], COMPUTED: [], GENERATED: []}
    for label, s in zip(labels, ordered):
        start = 0
        for i, (h, n) in enumerate(zip(s.hashes, s.lengths)):
            kind = SHARED if i < s.copied else COMPUTED
            where = "in the pool" if s.pooled[i] else "freed from the pool"
            short = h[:SHORT_HASH]
            parts[kind].append(_Drawn(label, start, n, short, f"block {short}: {n} tokens, {where}"))
            start += n
        if s.tokens > start:
            left = s.tokens - start
            parts[GENERATED].append(_Drawn(label, start, left, "", f"{left} generated tokens"))
    fig = go.Figure()
    names = {SHARED: "copied from the pool (shared)", COMPUTED: "computed by this session", GENERATED: "generated"}
    for colour, rows in parts.items():
        fig.add_bar(
            orientation="h",
            y=[r.row for r in rows],
            base=[r.start for r in rows],
            x=[r.length for r in rows],
            text=[r.text for r in rows],
            textposition="inside",
            insidetextanchor="middle",
            # a light fill under dark text, outlined in the full colour: the hashes read at AA contrast on any block
            textfont={"color": TEXT},
            marker={"color": _faded(colour), "line": {"width": 2, "color": colour}},
            name=names[colour],
            customdata=[r.hover for r in rows],
            hovertemplate="%{customdata}<extra></extra>",
        )
    more = len(sessions) - len(ordered)
    title = "Each session's KV cache, block by block" + (f" ({more} more sessions not drawn)" if more else "")
    fig.update_layout(barmode="overlay", bargap=0.25)
    fig.update_xaxes(title_text="positions in the cache (a prompt block is 16)", rangemode="tozero")
    fig.update_yaxes(autorange="reversed", title_text=None)
    fig = styled(fig, title, height=max(300, 150 + 40 * len(ordered)))
    fig.update_layout(uniformtext={"minsize": 12, "mode": "show"})  # every hash at one readable size
    # the legend at the figure's foot, below the axis title, however many rows the chart has
    legend = {"orientation": "h", "x": 0, "yref": "container", "y": 0, "yanchor": "bottom"}
    fig.update_layout(legend=legend, margin={"b": 110})
    return fig


def prefix_markdown(stats: PrefixStats | None, prefix_noise: float | None) -> str:
    """The prefix cache in a few sentences: how much prompt it saved, what its blocks cost, and what a block table
    (sharing in place, as vLLM does) would hold instead of our copies."""
    if stats is None or not stats.prompts:
        return f"**{term('prefix cache', 'Prefix cache')}:** no prompt has asked it yet."
    lines = [
        f"**{term('prefix cache', 'Prefix cache')}:** {stats.hit_rate:.0%} of prompt tokens came from it "
        f"({count(stats.reused_tokens, 'prompt token')} not computed, of {stats.prompt_tokens:,}); "
        f"{stats.prompts_hit} of {count(stats.prompts, 'prompt')} took at least one {term('KV block', 'block')}.",
        f"It holds {count(stats.blocks, 'block')} ({_mib(stats.pool_bytes)}). The sessions' own caches hold "
        f"{_mib(stats.session_bytes)}: with the pool, the server holds {_mib(stats.session_bytes + stats.pool_bytes)}, "
        f"against {_mib(stats.session_bytes)} without prefix caching, because each session gets its own copy of the "
        f"shared blocks. Shared in place through a block table, as vLLM does, the same sessions would hold "
        f"{_mib(stats.block_table_bytes)}.",
    ]
    if stats.copied_blocks:
        lines.append(f"Copying a block into a session's cache took {_num(stats.copy_ms / stats.copied_blocks)} ms.")
    if prefix_noise:
        lines.append(
            f"A prompt that shares only its start computes the rest against copied blocks: its logits can differ "
            f"from one pass over the whole prompt by up to {_small(prefix_noise)} (measured at start)."
        )
    return " ".join(lines)


def _faded(hex_colour: str, alpha: float = 0.25) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r}, {g}, {b}, {alpha})"


def _mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.1f} MiB"


def shared_verdict(shared_ms: float, one_by_one_ms: float) -> str:
    """What the measured pair says, and no more: the shared pass's share of the one-after-another time."""
    share = shared_ms / one_by_one_ms
    if share < 1:
        return f"the shared pass took {share:.0%} of that ({1 - share:.0%} saved)"
    return f"the shared pass took {share:.0%} of that: sharing saved nothing in this window"


def _num(x: float) -> str:
    """Whole numbers from 10 up, one decimal below: '464', '7.5'."""
    return f"{x:.0f}" if abs(x) >= 10 else f"{x:.1f}"


def _small(x: float) -> str:
    """A tiny gap in plain decimals, two significant digits: 3e-05 -> '0.00003'."""
    return np.format_float_positional(x, precision=2, unique=True, fractional=False, trim="-")
