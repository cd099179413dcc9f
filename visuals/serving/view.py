"""The continuous-batching tab's view, one element the page patches (visuals.parts, ui/patch.py): the line that says
what the traffic shows, the passes of the last minute beside the roofline, the prefix cache's line and its blocks.

Every page watching live asks for it every 2 s. A refresh sends what changed: the passes that ended since the last
one (appended), how many left the window (dropped from the front), the window's new place (one attribute), and the
words and charts whose numbers moved. Each part keeps the element id it had as a component of its own
(`#serving-status`, `#serving-ticks`, `#serving-cost`, `#serving-prefix`, `#serving-blocks`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from visuals.chart import empty_html
from visuals.parts import Parts
from visuals.serving import ticks as passes
from visuals.serving.traffic import NO_TRAFFIC

if TYPE_CHECKING:
    from decoding.serving.traffic import Tick

T = "#serving-ticks"


def traffic_view(status: str, ticks: list[Tick], now: float, cost: str, prefix: str, blocks: str) -> Parts:
    """The whole view from the words and charts drawn for it, and the passes of the window ending `now`."""
    shown = passes.shown(ticks, now)
    origin = passes.origin_for(now)
    slots = {"#serving-status": status, "#serving-cost": cost, "#serving-prefix": prefix, "#serving-blocks": blocks}
    if shown:
        chart = passes.ticks_chart(shown, now, origin)
        drawn, shape, strips = chart["html"], ("passes", origin), {f"{T} .serving-passes": chart["items"]}
        slots |= {
            f"{T} .serving-legend": chart["legend"],
            f"{T} .lc-y": chart["y"],
            f"{T} .lc-y2": chart["y2"],
            f"{T} .lc-lines": chart["lines"],
        }
        attrs = {(f"{T} .lc-plot", "style"): chart["style"]}
    else:
        drawn, shape, strips, attrs = empty_html(NO_TRAFFIC, passes.HEIGHT), ("quiet",), {}, {}
    whole = (
        f'<div class="serving-view"><div id="serving-status">{status}</div>'
        f'<div class="serving-charts"><div id="serving-ticks">{drawn}</div><div id="serving-cost">{cost}</div></div>'
        f'<div id="serving-prefix">{prefix}</div><div id="serving-blocks">{blocks}</div></div>'
    )
    return Parts(html=whole, shape=shape, strips=strips, slots=slots, attrs=attrs)


# the two charts side by side down to 420 px each (a projector's 1280 too); narrower, one above the other
CSS = (
    passes.CSS
    + """
.serving-charts { display: grid; gap: 8px 24px; margin: 8px 0;
  grid-template-columns: repeat(auto-fit, minmax(min(420px, 100%), 1fr)); }
.serving-view > div { margin: 6px 0; }
"""
)
