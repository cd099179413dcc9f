"""The server's own traffic: one record per forward pass the scheduler ran, kept for the last few minutes.

This is the continuous-batching lesson's data, read from real use: how many sessions shared each pass, how many
prefill tokens rode along, how long the pass took. Tick time against batch size is the decode roofline measured
on live traffic: while the weights dominate what a pass reads, adding a row costs little.
"""

import threading
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass
from statistics import median


@dataclass(frozen=True)
class Tick:
    """One forward pass of the scheduler."""

    at: float  # time.time() when the pass ended
    ms: float  # wall time of the pass, device synchronised
    rows: int  # sessions in the pass
    decode_rows: int  # of them, sessions decoding one token
    prefill_tokens: int  # prompt tokens that rode along (chunked prefill)
    mode: str  # "packed" (many sessions, one pass), "solo" (one session, the plain path) or "alone" (asked to be)

    def to_dict(self) -> dict:
        return asdict(self)


class TickLog:
    """The last `size` ticks, safe to read while the scheduler writes."""

    def __init__(self, size: int = 2000):
        self._ticks: deque[Tick] = deque(maxlen=size)
        self._lock = threading.Lock()

    def add(self, tick: Tick) -> None:
        with self._lock:
            self._ticks.append(tick)

    def recent(self, window_s: float = 120.0, now: float | None = None) -> list[Tick]:
        now = time.time() if now is None else now
        with self._lock:
            return [t for t in self._ticks if now - t.at <= window_s]


def summary(ticks: list[Tick], window_s: float) -> dict:
    """What the ticks say together: passes, batch sizes, tokens per second, and the time per pass at each size."""
    if not ticks:
        return {
            "ticks": 0,
            "window_s": window_s,
            "decode_tokens": 0,
            "prefill_tokens": 0,
            "tokens_per_s": 0.0,
            "busy": 0.0,
            "rows_histogram": {},
            "median_ms_by_rows": {},
            "mean_rows": 0.0,
        }
    span = max(window_s, 1e-9)
    decode = sum(t.decode_rows for t in ticks)
    by_rows: dict[int, list[float]] = {}
    for t in ticks:
        by_rows.setdefault(t.rows, []).append(t.ms)
    return dict(
        ticks=len(ticks),
        window_s=window_s,
        decode_tokens=decode,
        prefill_tokens=sum(t.prefill_tokens for t in ticks),
        tokens_per_s=decode / span,
        busy=sum(t.ms for t in ticks) / 1e3 / span,
        rows_histogram=dict(sorted(Counter(t.rows for t in ticks).items())),
        median_ms_by_rows={rows: median(ms) for rows, ms in sorted(by_rows.items())},
        mean_rows=sum(t.rows for t in ticks) / len(ticks),
    )
