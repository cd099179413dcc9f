"""Same logits, each strategy alone: one small panel per strategy, side by side.

Every panel shows the same top-N tokens at the model's own probabilities (whole vocabulary), each
bar coloured by its fate under that strategy alone: kept, or removed (pale, hatched, in the colour
of the stage that removed it). A dash marks the probability the strategy would sample the token with.
Takes plain results (`decoding.sandbox.Alone`); no torch here.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from decoding.stages import TOP_K
from visuals.chart import Axis, Bar, Chart, Column, Key, Mark, figure_html, legend_html
from visuals.theme import CHOSEN, KEPT, OTHER, REMOVED, STAGE_LABELS, TEXT

if TYPE_CHECKING:
    from decoding.sandbox import Alone

NAMES = {"greedy": "greedy", **STAGE_LABELS}
REST_GAP = 3  # the "rest" bar stands this many ranks after the last shown token


def percent(mass: float) -> str:
    """A share of probability mass, readable at a glance: 65%, 6.4%, 0.26%, 99.5%, 100%."""
    pct = 100 * mass
    if pct >= 99.95:
        return "100%"
    if pct >= 99 or 1 <= pct < 10:
        return f"{pct:.1f}%"
    return f"{pct:.0f}%" if pct >= 10 else f"{pct:.2g}%"


def panel_title(r: Alone) -> list[str]:
    """The panel's heading, line by line: 'top-p 0.9' (bold), '(usual value)', 'ties kept', 'keeps N',
    '(M% of mass)'. Short lines: on a phone, or at 800 px, five panels share the width."""
    head = NAMES.get(r.name, r.name)
    value = "" if r.value is None else f"{r.value:g}"
    lines = [f"{head} {value}".strip()]
    if r.usual and r.value is not None:
        lines.append("(usual value)")
    # top-k keeps every token tied with the k-th, so it can keep more than k
    if r.name == TOP_K.name and r.kept > (r.value or 0):
        lines.append("ties kept")
    return lines + [f"keeps {r.kept:,}", f"({percent(r.mass)} of mass)"]


def _fate_name(r: Alone, keep: bool) -> str:
    if keep:
        return "chosen by greedy" if r.name == "greedy" else "kept"
    # plain words in a legend (a chart's words hold no glossary button)
    return "not greedy's pick" if r.name == "greedy" else f"removed by {NAMES.get(r.name, r.name)}"


def _colour(r: Alone, keep: bool) -> str:
    if keep:
        return CHOSEN if r.name == "greedy" else KEPT
    return REMOVED.get(r.name, OTHER)


AFTER = "p it samples with"


def _columns(r: Alone, labels: dict[int, str], n_top: int) -> tuple[Column, ...]:
    """One column per top token (its model probability, in its fate's colour, the dash at what this strategy samples
    it with), a gap, then the rest: one stacked bar, the kept part at the bottom, the removed part on top."""
    columns = []
    for i, (token, keep) in enumerate(zip(r.ids, r.keeps)):
        name = _fate_name(r, keep)
        hover = f"id {token} {labels.get(token, '')}\nmodel p {r.before[i]:.4f}"
        hover += f"\nthis strategy samples with p {r.after[i]:.4f}"
        bar = Bar(name, r.before[i], _colour(r, keep), "solid" if keep else "pale", hover=hover)
        shown = str(i + 1) if (i + 1) in RANK_TICKS and i + 1 <= max(_last_tick(n_top, bool(r.rest)), 1) else ""
        columns.append(Column(str(i + 1), (bar,), Mark(AFTER, r.after[i]), shown=shown))
    columns += [Column("", shown="") for _ in range(n_top - len(r.ids) + REST_GAP - 1)]
    if r.rest:
        rest = f"the other {r.rest:,} tokens together"
        bars = []
        if r.rest_kept > 0:
            hover = f"{rest}: kept p {r.rest_kept:.4f}, sampled with p {r.rest_after:.4f}"
            bars.append(Bar(_fate_name(r, True), r.rest_kept, _colour(r, True), hover=hover))
        if r.rest_removed > 0:
            hover = f"{rest}: removed p {r.rest_removed:.4f}"
            bars.append(Bar(_fate_name(r, False), r.rest_removed, _colour(r, False), "pale", r.rest_kept, hover))
        columns.append(Column("rest", tuple(bars), Mark(AFTER, r.rest_after)))
    return tuple(columns)


RANK_TICKS = (1, 5, 10, 20, 30, 40, 50)


def _last_tick(n_top: int, has_rest: bool) -> int:
    # a rank tick too close to "rest" would overprint it, and rank 5 crowds 1 and 10 when there are many
    return n_top - REST_GAP - 2 if has_rest else n_top


def strategies_figure(results: list[Alone], labels: dict[int, str] | None = None, height: int = 220) -> str:
    """One panel per result, left to right (wrapping on a narrow screen), one shared probability scale; `labels`
    (optional) maps token id -> visible text for the hover. HTML (visuals.chart): it follows every Step of every
    student that has the panel open."""
    labels = labels or {}
    n_top = max((len(r.ids) for r in results), default=0)
    tops = [max(r.before + r.after + [r.rest_kept + r.rest_removed, r.rest_after]) for r in results]
    top = min(1.0, max(tops, default=1.0)) * 1.05
    y = Axis(0.0, top, tuple(t for t in (0.0, 0.25, 0.5, 0.75, 1.0) if t <= top), "probability", percent=True)
    panels = []
    for r in results:
        head, *rest = panel_title(r)
        title = f'<div class="lc-panel-title"><b>{html.escape(head)}</b>' + "".join(
            f"<span>{html.escape(line)}</span>" for line in rest
        )
        chart = Chart(_columns(r, labels, n_top), y, height=height)
        panels.append(f'<div class="lc-panel">{title}</div>{figure_html(chart, cls="lc-small")}</div>')
    keys = {}
    for r in results:
        for keep in (True, False):
            keys.setdefault(
                _fate_name(r, keep), Key(_fate_name(r, keep), _colour(r, keep), "solid" if keep else "pale")
            )
    legend = legend_html([*keys.values(), Key(AFTER, TEXT, "mark")])
    x_title = f"rank (top {n_top}), then all the rest"
    return f'<div class="lc-panels">{"".join(panels)}</div><div class="lc-xtitle">{html.escape(x_title)}</div>{legend}'
