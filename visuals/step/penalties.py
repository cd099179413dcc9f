"""What the repetition, presence and frequency penalties did to this step's logits.

Penalties are the only stages that can change which token is most likely: they push down tokens
already in the context. The chart shows each moved token's logit before and after, side by side, so the learner
sees the push and whether it was enough to reorder the top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from decoding.stages import TOP_K
from visuals.chart import Bar, Chart, Column, Key, empty_html, figure_html, nice_axis
from visuals.theme import KEPT, REMOVED
from visuals.tokens import visible_token

if TYPE_CHECKING:
    from decoding.inspector import Moved

BEFORE, AFTER = "logit before", "after penalties"
OFF = "No penalty is on: set repetition > 1, or presence / frequency ≠ 0"
NONE_YET = "Penalties are on, but no token in the context is affected yet"


def penalties_figure(moved: list[Moved], active: bool) -> str:
    """Before/after logits of the tokens the penalties moved (the most likely few), as an HTML chart."""
    if not active:
        return empty_html(OFF, 160)
    if not moved:
        return empty_html(NONE_YET, 160)
    after = REMOVED[TOP_K.name]
    columns = tuple(
        Column(
            f"{visible_token(m.text)} ({m.id})",
            (
                Bar(BEFORE, m.before, KEPT, hover=f"{visible_token(m.text)}: logit {m.before:.2f} before"),
                Bar(AFTER, m.after, after, hover=f"{visible_token(m.text)}: logit {m.after:.2f} after the penalties"),
            ),
            grouped=True,
        )
        for m in moved
    )
    values = [v for m in moved for v in (m.before, m.after)]
    y = nice_axis(max(values), min(0.0, min(values)), title="logit")
    title = f"Penalties moved {len(moved)} of the likeliest tokens"
    legend = (Key(BEFORE, KEPT), Key(AFTER, after))
    return figure_html(Chart(columns, y, title=title, legend=legend, height=200, vertical_labels=True), "penalties")
