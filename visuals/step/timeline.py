"""Where a request's time goes: one prefill pass over the prompt, then one decode pass per token.

Prefill processes every prompt token at once and is compute-bound; each decode step processes one
token and is bound by reading the weights (and the KV cache) from memory. Sampling and drawing are
shown next to the forward pass so the learner sees which part of a step is the model's.
"""

import math
from dataclasses import dataclass

import plotly.graph_objects as go

from decoding.timing.roofline import time_per_output_token
from visuals.glossary import term
from visuals.theme import DECODE, OTHER, PREFILL, SAMPLING, empty_figure, figure_from, look


@dataclass(frozen=True)
class RequestNumbers:
    ttft_ms: float  # prefill + choosing the first token
    tpot_ms: float  # (end-to-end - TTFT) / (N - 1): NaN until there are two tokens
    tokens_per_s: float
    decode_share: float  # decode forward passes / all measured time

    def markdown(self) -> str:
        tpot = "—" if math.isnan(self.tpot_ms) else f"{self.tpot_ms:.1f} ms"
        return (
            f"**{term('TTFT')}** {self.ttft_ms:.0f} ms · **{term('TPOT', 'time per output token')}** {tpot} · "
            f"**{self.tokens_per_s:.1f} tokens/s** · decode is **{self.decode_share:.0%}** of the measured time"
        )


def request_numbers(prefill_ms: float, forward_ms: list[float], sample_ms: list[float]) -> RequestNumbers | None:
    """`forward_ms[i]`, `sample_ms[i]`: the forward pass that produced step i's distribution, and choosing it.
    Step 0's forward is the prefill itself."""
    if not sample_ms:
        return None
    decode = forward_ms[1:]
    ttft = prefill_ms + sample_ms[0]
    total = prefill_ms + sum(decode) + sum(sample_ms)
    return RequestNumbers(
        ttft_ms=ttft,
        tpot_ms=time_per_output_token(ttft, total, len(sample_ms)),
        tokens_per_s=len(sample_ms) / (total / 1e3) if total > 0 else float("nan"),
        decode_share=sum(decode) / total if total > 0 else 0.0,
    )


def request_timeline_figure(
    prefill_ms: float, forward_ms: list[float], sample_ms: list[float], draw_ms: list[float] | None = None
) -> go.Figure:
    """Stacked bars: the prefill pass, then each decode step split into forward / sampling / drawing."""
    if not sample_ms:
        return empty_figure("Press Prefill, then Step: each step's time appears here", height=300)
    draw_ms = list(draw_ms or [])
    n = len(sample_ms)
    x = ["prefill", *[f"{i + 1}" for i in range(n)]]
    bars = [
        (x[:1], [prefill_ms], "prefill (whole prompt)", PREFILL),
        (x[1:], [0.0, *forward_ms[1:n]], "decode forward (one token)", DECODE),
        (x[1:], sample_ms, "sampling", SAMPLING),
    ]
    if draw_ms:
        bars.append((x[1 : 1 + len(draw_ms)], draw_ms, "drawing (server)", OTHER))
    layout = look("Prefill vs each decode step (the prefill pass produced step 1's distribution)", height=340)
    layout |= {"barmode": "stack", "legend": {**layout["legend"], "y": -0.25}}
    layout["xaxis"] |= {"type": "category"}
    layout["yaxis"] |= {"title": {"text": "ms"}}
    # plain data (theme.figure_from): it is redrawn after every Step of every student
    data = [{"type": "bar", "x": bx, "y": by, "name": name, "marker": {"color": c}} for bx, by, name, c in bars]
    return figure_from(data, layout)
