"""Log axes that read: 1-2-5 ticks, and exact zeros (which a log axis cannot place) on a labelled line of
their own below the smallest value, so "bit-identical" stays visible instead of vanishing."""

import math

import numpy as np


def log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks between lo and hi, so a log axis reads without crowded minor labels."""
    ticks = [m * 10.0**e for e in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1) for m in (1, 2, 5)]
    return [t for t in ticks if lo / 1.5 <= t <= hi * 1.5]


def zero_floor(values: list[float]) -> tuple[float, float, float]:
    """(where to draw exact zeros, smallest and largest positive value) on a log axis."""
    pos = [v for v in values if v > 0]
    lo, hi = (min(pos), max(pos)) if pos else (1e-3, 1.0)
    return 10 ** (math.floor(math.log10(lo)) - 1), lo, hi


def log_axis(floor: float, lo: float, hi: float, zero_label: str | None) -> dict:
    """A log axis from lo to hi; with `zero_label`, exact zeros get their own labelled tick at `floor` below."""
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    if hi / lo > 1e3:  # many decades: powers of ten only, or the labels pile up
        ticks = [10.0**e for e in decades if lo / 3 <= 10.0**e <= hi * 3]
    else:
        ticks = log_ticks(lo, hi)
        if len(ticks) < 3:  # a narrow range: finer ticks, so the axis still reads
            ticks = [
                m * 10.0**e
                for e in decades
                for m in (1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9)
                if lo / 1.3 <= m * 10.0**e <= hi * 1.3
            ]
    ticks = [t for t in ticks if t > floor * 3]
    vals = ([floor] if zero_label else []) + ticks
    text = ([zero_label] if zero_label else []) + [_tick(t) for t in ticks]
    low = floor if zero_label else lo
    return {"type": "log", "tickvals": vals, "ticktext": text, "range": [math.log10(low) - 0.3, math.log10(hi) + 0.3]}


def _tick(t: float) -> str:
    if t >= 1e-3:
        return f"{t:g}"
    exponent = math.floor(math.log10(t))
    return f"{t / 10**exponent:g}e{exponent}"
