"""What the repetition, presence and frequency penalties did to this step's logits.

Penalties are the only stages that can change which token is most likely: they push down tokens
already in the context. The chart shows each moved token's logit before and after, so the learner
sees the push and whether it was enough to reorder the top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from decoding.stages import TOP_K
from visuals.theme import KEPT, REMOVED, empty_figure, styled
from visuals.tokens import visible_token

if TYPE_CHECKING:
    from decoding.inspector import Moved


def penalties_figure(moved: list[Moved], active: bool) -> go.Figure:
    """Before/after logits of the tokens the penalties moved (the most likely few)."""
    if not active:
        return empty_figure("No penalty is on: set repetition > 1, or presence / frequency ≠ 0", height=260)
    if not moved:
        return empty_figure("Penalties are on, but no token in the context is affected yet", height=260)
    labels = [f"{visible_token(m.text)} ({m.id})" for m in moved]
    fig = go.Figure()
    fig.add_bar(y=labels, x=[m.before for m in moved], name="logit before", orientation="h", marker_color=KEPT)
    fig.add_bar(
        y=labels, x=[m.after for m in moved], name="after penalties", orientation="h", marker_color=REMOVED[TOP_K.name]
    )
    fig.update_layout(barmode="group")
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text="logit")
    return styled(fig, f"Penalties moved {len(moved)} of the likeliest tokens", height=max(260, 60 + 34 * len(moved)))
