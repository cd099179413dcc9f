"""Where a request's time goes: one prefill pass over the prompt, then one decode pass per token.

Prefill processes every prompt token at once and is compute-bound; each decode step processes one
token and is bound by reading the weights (and the KV cache) from memory. Sampling and drawing are
shown next to the forward pass so the learner sees which part of a step is the model's.

A prompt answered from the prefix cache (another session computed it; this one copied its keys and values) took no
prefill pass of its own: its bar is drawn as a copy, hatched, and says what computing it took, so the chart never
sets a copy's few milliseconds against the decode steps as if it were a prefill.
"""

import math
from dataclasses import dataclass

from decoding.timing.roofline import time_per_output_token
from visuals.chart import (
    Bar,
    Chart,
    Column,
    Key,
    column_html,
    empty_html,
    figure_html,
    label_html,
    lines_html,
    nice_axis,
    plot_style,
    ticks_html,
)
from visuals.glossary import term
from visuals.parts import Parts
from visuals.theme import DECODE, OTHER, PREFILL, SAMPLING

TITLE = "Prefill vs each decode step (the prefill pass produced step 1's distribution)"
PREFILL_NAME = "prefill (whole prompt)"
COPIED_NAME = "prefill copied from the prefix cache (not computed here)"


@dataclass(frozen=True)
class RequestNumbers:
    ttft_ms: float  # prefill + choosing the first token
    tpot_ms: float  # (end-to-end - TTFT) / (N - 1): NaN until there are two tokens
    tokens_per_s: float  # 1000 / TPOT: the decode rate, from the same definition
    decode_share: float  # decode forward passes / all measured time

    def markdown(self) -> str:
        tpot = "—" if math.isnan(self.tpot_ms) else f"{self.tpot_ms:.1f} ms"
        rate = "—" if math.isnan(self.tokens_per_s) else f"{self.tokens_per_s:.1f}"
        return (
            f"**{term('TTFT')}** {self.ttft_ms:.0f} ms · **{term('TPOT', 'time per output token')}** {tpot} "
            f"(**{rate} tokens/s** after the first) · decode is **{self.decode_share:.0%}** of the measured time"
        )


def request_numbers(prefill_ms: float, forward_ms: list[float], sample_ms: list[float]) -> RequestNumbers | None:
    """`forward_ms[i]`, `sample_ms[i]`: the forward pass that produced step i's distribution, and choosing it.
    Step 0's forward is the prefill itself. Tokens per second is 1000 / TPOT: one definition for both, so the two
    numbers always agree (before, tokens/s counted the prefill and TPOT did not)."""
    if not sample_ms:
        return None
    decode = forward_ms[1:]
    ttft = prefill_ms + sample_ms[0]
    total = prefill_ms + sum(decode) + sum(sample_ms)
    tpot = time_per_output_token(ttft, total, len(sample_ms))
    return RequestNumbers(
        ttft_ms=ttft,
        tpot_ms=tpot,
        tokens_per_s=1e3 / tpot if tpot > 0 else float("nan"),
        decode_share=sum(decode) / total if total > 0 else 0.0,
    )


@dataclass(frozen=True)
class Prefill:
    """How the prompt's pass ran: its time here, and, when it was copied from the prefix cache, what computing it
    took the session that did (None when not known)."""

    ms: float
    copied: bool = False
    computed_ms: float | None = None


def request_timeline(
    prefill: Prefill, forward_ms: list[float], sample_ms: list[float], draw_ms: list[float] | None = None
) -> Parts:
    """Stacked bars: the prefill pass, then each decode step split into forward / sampling / drawing; as `Parts`, so
    a new step sends its one column (and the axis, when it grew)."""
    n, draw_ms = len(sample_ms), list(draw_ms or [])
    columns = (_prefill_column(prefill), *(_step_column(k, forward_ms, sample_ms, draw_ms) for k in range(1, n + 1)))
    totals = [sum(b.value for b in c.bars) for c in columns]
    y = nice_axis(max(totals, default=1.0) or 1.0, title="ms")
    every = _label_every(len(columns))
    legend = [Key(COPIED_NAME if prefill.copied else PREFILL_NAME, PREFILL, "outline" if prefill.copied else "solid")]
    legend += [Key("decode forward (one token)", DECODE), Key("sampling", SAMPLING)]
    if draw_ms:
        legend.append(Key("drawing (server)", OTHER))
    chart = Chart(columns, y, title=TITLE, legend=tuple(legend), height=220, label_every=every)
    return Parts(
        html=figure_html(chart, cls="timeline"),
        shape=("timeline", every, tuple(legend)),
        strips={
            ".lc-cols": tuple(column_html(c) for c in columns),
            ".lc-x": tuple(label_html(c.label, i, every) for i, c in enumerate(columns)),
        },
        slots={".lc-lines": lines_html(y), ".lc-y": ticks_html(y)},
        attrs={(".lc-plot", "style"): plot_style(y)},
    )


def _prefill_column(prefill: Prefill) -> Column:
    if not prefill.copied:
        hover = f"prefill: one pass over the whole prompt, {prefill.ms:.1f} ms"
        return Column("prefill", (Bar(PREFILL_NAME, prefill.ms, PREFILL, hover=hover),))
    computed = f"; computing it took {prefill.computed_ms:.1f} ms" if prefill.computed_ms is not None else ""
    hover = f"copied from the prefix cache in {prefill.ms:.1f} ms: another session computed this prompt{computed}"
    return Column("prefill (copy)", (Bar(COPIED_NAME, prefill.ms, PREFILL, "outline", hover=hover),))


def _step_column(k: int, forward_ms: list[float], sample_ms: list[float], draw_ms: list[float]) -> Column:
    """Step k (from 1): the forward pass that produced its distribution (step 1's was the prefill), choosing it,
    and drawing it."""
    parts = [
        ("decode forward (one token)", forward_ms[k - 1] if k > 1 else 0.0, DECODE),
        ("sampling", sample_ms[k - 1], SAMPLING),
    ]
    if k <= len(draw_ms):
        parts.append(("drawing (server)", draw_ms[k - 1], OTHER))
    bars, base = [], 0.0
    for name, ms, colour in parts:
        bars.append(Bar(name, ms, colour, base=base, hover=f"step {k} · {name}: {ms:.1f} ms"))
        base += ms
    return Column(str(k), tuple(bars))


def _label_every(columns: int) -> int:
    """Every label up to 30 columns, then one in 5, 25, 100: steps only when the run passes those, so a new step
    only adds its column until then."""
    return next(every for limit, every in ((30, 1), (150, 5), (750, 25)) if columns <= limit) if columns <= 750 else 100


BLANK = "Press Prefill, then Step: each step's time appears here"


def timeline_blank() -> Parts:
    """The chart before a run: what to press to fill it."""
    return Parts(html=empty_html(BLANK, 220), shape=("blank",))
