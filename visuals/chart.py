"""Charts drawn as HTML on the server: columns of bars placed by percentages in CSS boxes, for the charts a page
redraws on every step.

A plotly chart redrawn on every Step cost a student's browser most of the click: plotly's own drawing, and the page
copying its ~50 KB of JSON several times before it draws (measured on the step tab: docs/measurements/step.md, "A
Step in the browser"). These charts are a few kilobytes of HTML, drawn by the browser's layout alone, and:
- their text is the page's text: it wraps, it grows with projector mode, it reads on a 390 px phone;
- their bars stretch to any width, because each column is a flex cell and each bar a box placed by percentages of
  its column, from two numbers on it (`--b` its bottom, `--v` its height, in the axis's units) and the axis's range
  on the plot (`--lo`, `--hi`): a new range is one attribute, the bars stay as they are;
- each bar says what it is (`title`, the browser's own hover), and carries what the tests read: `data-series`,
  `data-x`, `data-y` and `data-c` (the hover's numbers, as JSON);
- a column with a `key` (a token id) is what a click on it means (`data-key`).
Plotly stays where its zoom and hover pay: the one-off measurement charts.

Every function here is pure: plain values in, an HTML string out, every piece of text escaped.
"""

import html
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from visuals.theme import REMOVED_OPACITY, TEXT

LOOKS = ("solid", "pale", "outline")  # a kept bar; a removed one (pale, hatched); an empty hatched outline


@dataclass(frozen=True)
class Bar:
    """One bar of a column, from `base` to `base + value` on the y axis."""

    series: str  # its legend entry, and what the tests call it (data-series)
    value: float
    colour: str
    look: str = "solid"
    base: float = 0.0
    hover: str = ""  # the browser's hover text (lines joined with "\n")
    data: tuple = ()  # the numbers the hover shows, read by the tests and the page's scripts (data-c)


@dataclass(frozen=True)
class Mark:
    """A dash across a column at `value`: another reading of the same token (the model's own probability)."""

    series: str
    value: float
    colour: str = ""  # the page's text colour unless given (a number drawn against the bar: the uniform u)


@dataclass(frozen=True)
class Column:
    label: str
    bars: tuple[Bar, ...] = ()
    mark: Mark | None = None
    key: int | str | None = None  # what a click on the column means (data-key)
    grouped: bool = False  # its bars side by side (before / after), rather than overlaid or stacked
    shown: str | None = None  # the label under it, when not its label (a rank axis that names only some columns)
    rule: "Rule | None" = None  # a line down its middle (a first divergence): part of the column, so it moves with it


@dataclass(frozen=True)
class Axis:
    lo: float
    hi: float
    ticks: tuple[float, ...]
    title: str = ""
    percent: bool = False  # ticks as 0%, 50%, 100%

    def tick_text(self, t: float) -> str:
        return f"{t:.0%}" if self.percent else f"{t:g}"


@dataclass(frozen=True)
class Rule:
    """A line across the plot: at `y` on an axis (a floor, a threshold), or at `x` columns from the left (a cut)."""

    label: str
    colour: str
    y: float | None = None
    x: float | None = None
    axis: str = "y"  # "y", or "y2" for the curve's axis
    dash: str = "dashed"


@dataclass(frozen=True)
class Curve:
    """A line through the columns' centres, on the right-hand axis (`y2`), with a dot at each."""

    series: str
    values: tuple[float, ...]
    colour: str


@dataclass(frozen=True)
class Key:
    """A legend entry: a swatch drawn as the bars of that series are."""

    name: str
    colour: str
    look: str = "solid"  # a bar look, or "mark" (a dash) or "line"


@dataclass(frozen=True)
class Chart:
    """What one chart shows; `columns_html` and `figure_html` draw it."""

    columns: tuple[Column, ...]
    y: Axis
    title: str = ""
    sub: str = ""  # a second, smaller line under the title
    legend: tuple[Key, ...] = ()
    rules: tuple[Rule, ...] = ()
    curve: Curve | None = None
    y2: Axis | None = None
    height: int = 300  # the plot's height in px (its text adds to it)
    x_title: str = ""
    vertical_labels: bool = False  # the x labels read upwards (many narrow columns: tokens)
    label_every: int = 1  # every n-th x label shown (the others stay, empty, so the columns keep their width)
    extra: dict = field(default_factory=dict)  # more attributes of the <figure> (data-*)


def nice_axis(hi: float, lo: float = 0.0, n: int = 5, title: str = "", percent: bool = False) -> Axis:
    """An axis from `lo` to a little above `hi`, its ticks at a round step (1, 2 or 5 times a power of ten)."""
    span = hi - lo if hi > lo else 1.0
    raw = span / max(n, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(lo / step) * step
    top = math.ceil(hi / step) * step if hi > lo else lo + step
    ticks = tuple(round(first + i * step, 10) for i in range(int(round((top - first) / step)) + 1))
    return Axis(first, top, ticks, title, percent)


def figure_html(chart: Chart, cls: str = "") -> str:
    """The whole chart: title, legend, axes, plot, labels."""
    c = chart
    attrs = "".join(f' {k}="{html.escape(str(v))}"' for k, v in c.extra.items())
    y2 = c.y2 is not None and (c.curve is not None or any(r.axis == "y2" for r in c.rules))
    grid = [
        f'<div class="lc-ytitle"><span>{html.escape(c.y.title)}</span></div>',
        f'<div class="lc-y">{ticks_html(c.y)}</div>',
        plot_html(c),
        f'<div class="lc-y2">{ticks_html(c.y2) if y2 else ""}</div>',
        f'<div class="lc-x{" lc-x-up" if c.vertical_labels else ""}">{labels_html(c.columns, c.label_every)}</div>',
    ]
    x_title = f'<div class="lc-xtitle">{html.escape(c.x_title)}</div>' if c.x_title else ""
    return (
        f'<figure class="lc {cls}" style="--plot-h:{c.height}px"{attrs}>{title_html(c.title, c.sub)}'
        f'{legend_html(c.legend)}<div class="lc-grid">{"".join(grid)}</div>{x_title}</figure>'
    )


class Html(str):
    """Text already written as HTML, drawn as it is (a title that names a glossary term, marked by visuals.glossary);
    every other text of a chart is escaped."""


def _text(text: str) -> str:
    return text if isinstance(text, Html) else html.escape(text)


def title_html(title: str, sub: str = "") -> str:
    if not title and not sub:
        return ""
    under = f'<span class="lc-sub">{_text(sub)}</span>' if sub else ""
    return f'<figcaption class="lc-title"><span class="lc-head">{_text(title)}</span>{under}</figcaption>'


def legend_html(keys: Iterable[Key]) -> str:
    items = [f'<li><i class="lc-key lc-k-{k.look}" style="--c:{k.colour}"></i>{html.escape(k.name)}</li>' for k in keys]
    return f'<ul class="lc-legend">{"".join(items)}</ul>' if items else ""


def tick_end(at: float, span: float) -> str:
    """The class of an x tick's label at `at` along an axis `span` long: one at either end is set inside the plot's
    width, not centred on its tick (centred, the first ran into the y axis's bottom label on a phone)."""
    return ' class="lc-at-start"' if at <= 0 else ' class="lc-at-end"' if at >= span else ""


def ticks_html(axis: Axis) -> str:
    """Each tick's label at its height, and the longest once more, unseen and in the flow: the labels are placed out
    of the flow, so without it their column did not grow for them (0.0025 ran over the axis title beside it)."""
    texts = [axis.tick_text(t) for t in axis.ticks]
    widest = f'<b class="lc-sizer">{html.escape(max(texts, key=len))}</b>' if texts else ""
    return widest + "".join(
        f'<span style="bottom:{_share(t, axis):.2%}">{html.escape(text)}</span>' for t, text in zip(axis.ticks, texts)
    )


def plot_html(c: Chart) -> str:
    """The plot area: grid lines, the columns, the curve and the rules."""
    curve = curve_html(c.curve, c.y2, len(c.columns)) if c.curve is not None and c.y2 is not None else ""
    rules = "".join(rule_html(r, c.y2 if r.axis == "y2" else c.y, len(c.columns)) for r in c.rules)
    return (
        f'<div class="lc-plot" style="{plot_style(c.y)}"><div class="lc-lines">{lines_html(c.y)}</div>'
        f'<div class="lc-cols">{columns_html(c.columns)}</div>{curve}{rules}</div>'
    )


def plot_style(y: Axis) -> str:
    """The plot's range, which every bar and mark in it is placed by."""
    return f"--lo:{y.lo:g};--hi:{y.hi:g}"


def lines_html(y: Axis) -> str:
    """A grid line at each tick, and the zero line when the axis crosses zero."""
    lines = "".join(f'<i class="lc-gridline" style="bottom:{_share(t, y):.2%}"></i>' for t in y.ticks)
    zero = f'<i class="lc-zero" style="bottom:{_share(0, y):.2%}"></i>' if y.lo < 0 < y.hi else ""
    return lines + zero


def columns_html(columns: Sequence[Column]) -> str:
    return "".join(column_html(col) for col in columns)


def column_html(col: Column) -> str:
    """One column: its bars (overlaid, stacked by their bases, or side by side) and its mark."""
    key = "" if col.key is None else f' data-key="{html.escape(str(col.key))}"'
    n = len(col.bars)
    bars = "".join(bar_html(b, col.label, (i, n) if col.grouped else None) for i, b in enumerate(col.bars))
    mark = ""
    if col.mark is not None:
        m = col.mark
        colour = f";--m:{m.colour}" if m.colour else ""
        mark = (
            f'<i class="lc-mark" data-series="{html.escape(m.series)}" data-x="{html.escape(col.label)}" '
            f'data-y="{m.value:.6g}" style="--b:{m.value:.6g}{colour}"></i>'
        )
    if col.rule is not None:
        mark += rule_html(replace(col.rule, x=0.5, y=None), None, 1)
    return f'<div class="lc-col"{key}>{bars}{mark}</div>'


def bar_html(b: Bar, label: str, slot: tuple[int, int] | None = None) -> str:
    """One bar, placed by its bottom and height in the axis's units (a negative value hangs below its base)."""
    if b.look not in LOOKS:
        raise ValueError(f"a bar's look is one of {LOOKS}, got {b.look!r}")
    bottom, height = (b.base + b.value, -b.value) if b.value < 0 else (b.base, b.value)
    side = f"--i:{slot[0]};--n:{slot[1]};" if slot else ""
    data = f" data-c='{html.escape(json.dumps(list(b.data)), quote=False)}'" if b.data else ""
    return (
        f'<i class="lc-bar lc-{b.look}{" lc-side" if slot else ""}" data-series="{html.escape(b.series)}" '
        f'data-x="{html.escape(label)}" data-y="{b.value:.6g}"{data} title="{html.escape(b.hover)}" '
        f'style="--c:{b.colour};--b:{bottom:.6g};--v:{height:.6g};{side}"></i>'
    )


def labels_html(columns: Sequence[Column], every: int = 1) -> str:
    return "".join(label_html(col.label if col.shown is None else col.shown, i, every) for i, col in enumerate(columns))


def label_html(label: str, index: int, every: int = 1) -> str:
    shown = html.escape(label) if index % max(every, 1) == 0 else ""
    return f"<span>{shown}</span>"


def curve_html(curve: Curve, axis: Axis, n: int) -> str:
    """The curve as one stretched SVG line (its stroke drawn at one width however wide the plot), dots on it."""
    points = " ".join(f"{i + 0.5:g},{1 - _share(v, axis):.4f}" for i, v in enumerate(curve.values))
    dots = "".join(
        f'<i class="lc-dot" data-series="{html.escape(curve.series)}" data-x="{i}" data-y="{v:.6g}" '
        f'style="left:{(i + 0.5) / n:.2%};bottom:{_share(v, axis):.2%};--c:{curve.colour}"></i>'
        for i, v in enumerate(curve.values)
    )
    return (
        f'<svg class="lc-curve" viewBox="0 0 {n} 1" preserveAspectRatio="none" aria-hidden="true">'
        f'<polyline points="{points}" style="stroke:{curve.colour}"/></svg>{dots}'
    )


def rule_html(rule: Rule, axis: Axis | None, n: int) -> str:
    """A dashed line at `y` across the plot, or at `x` columns from its left, with its label beside it."""
    note = f'<span class="lc-note" style="color:{rule.colour}">{html.escape(rule.label)}</span>'
    if rule.x is not None:
        where = f"left:{rule.x / max(n, 1):.2%}"
        return f'<div class="lc-rule lc-rule-x lc-{rule.dash}" style="{where};--c:{rule.colour}">{note}</div>'
    if axis is None or rule.y is None:
        raise ValueError(f"a rule needs an x, or a y on an axis the chart has: {rule!r}")
    where = f"bottom:{min(max(_share(rule.y, axis), 0), 1):.2%}"
    return f'<div class="lc-rule lc-rule-y lc-{rule.dash}" style="{where};--c:{rule.colour}">{note}</div>'


def empty_html(message: str, height: int = 240, cls: str = "") -> str:
    """A blank chart that says what to do to fill it."""
    return f'<figure class="lc lc-empty {cls}" style="--plot-h:{height}px"><p>{html.escape(message)}</p></figure>'


SPAN_LOOKS = (*LOOKS, "tint", "dashed")  # and, for a span with words inside: a light fill, its edge solid or dashed


@dataclass(frozen=True)
class Span:
    """A stretch of a lane from `start`, `length` long on the x axis: a pass on a time line, a block of a cache."""

    series: str
    start: float
    length: float
    colour: str
    look: str = "solid"
    text: str = ""  # written inside it (a block's hash); cut where the span is too narrow
    hover: str = ""
    data: tuple = ()  # more numbers for the tests and the page (data-c, after the start)


@dataclass(frozen=True)
class Lane:
    label: str
    spans: tuple[Span, ...] = ()


@dataclass(frozen=True)
class Lanes:
    """A chart of lanes, one row each, their spans placed along one x axis (the lanes' labels on the left)."""

    lanes: tuple[Lane, ...]
    x: Axis
    title: str = ""
    sub: str = ""
    legend: tuple[Key, ...] = ()
    extra: dict = field(default_factory=dict)  # more attributes of the <figure> (data-*)


def lanes_html(chart: Lanes, cls: str = "") -> str:
    """The lanes, the x axis's grid lines across them and its ticks under them. Each span is placed by its start
    and length (`--s`, `--l`) against the axis's range on the figure (`--xlo`, `--xhi`), so a wider axis is one
    attribute and the spans stay as they are."""
    c = chart
    attrs = "".join(f' {k}="{html.escape(str(v))}"' for k, v in c.extra.items())
    rows = "".join(
        f'<span class="lc-lane-label">{html.escape(lane.label)}</span>'
        f'<div class="lc-lane">{"".join(span_html(s, lane.label) for s in lane.spans)}</div>'
        for lane in c.lanes
    )
    lines = "".join(f'<i class="lc-vline" style="left:{_share(t, c.x):.2%}"></i>' for t in c.x.ticks)
    ticks = "".join(
        f'<span style="left:{_share(t, c.x):.2%}"{tick_end(t - c.x.lo, c.x.hi - c.x.lo)}>'
        f"{html.escape(c.x.tick_text(t))}</span>"
        for t in c.x.ticks
    )
    x_title = f'<div class="lc-xtitle">{html.escape(c.x.title)}</div>' if c.x.title else ""
    return (
        f'<figure class="lc lc-lanes {cls}" style="{lanes_style(c.x)}"{attrs}>{title_html(c.title, c.sub)}'
        f'{legend_html(c.legend)}<div class="lc-lanes-grid" style="--rows:{max(len(c.lanes), 1)}">'
        f'<div class="lc-vlines">{lines}</div>{rows}<span></span><div class="lc-xticks">{ticks}</div></div>{x_title}'
        "</figure>"
    )


def lanes_style(x: Axis) -> str:
    """The x range every span of a lanes chart is placed by."""
    return f"--xlo:{x.lo:g};--xhi:{x.hi:g}"


def span_html(s: Span, lane: str) -> str:
    """One span of a lane: `data-x` its lane, `data-y` its length, `data-c` its start then its other numbers."""
    if s.look not in SPAN_LOOKS:
        raise ValueError(f"a span's look is one of {SPAN_LOOKS}, got {s.look!r}")
    data = html.escape(json.dumps([round(s.start, 6), *s.data]), quote=False)
    return (
        f'<i class="lc-span lc-{s.look}" data-series="{html.escape(s.series)}" data-x="{html.escape(lane)}" '
        f'data-y="{s.length:.6g}" data-c=\'{data}\' title="{html.escape(s.hover)}" '
        f'style="--c:{s.colour};--s:{s.start:.6g};--l:{s.length:.6g}">{html.escape(s.text)}</i>'
    )


def _share(value: float, axis: Axis) -> float:
    """Where `value` sits on `axis`, from 0 (its bottom) to 1 (its top)."""
    return (value - axis.lo) / (axis.hi - axis.lo) if axis.hi > axis.lo else 0.0


# the page's rules for every chart above (app.py adds them once); sizes in em, so projector mode's larger text makes
# larger charts' text too, and the plot's height is the chart's own
CSS = f"""
.lc {{ margin: 0; font-size: calc(15px * var(--lab-type, 1)); color: var(--body-text-color, {TEXT}); }}
.lc-title {{ font-size: 1.1em; margin: 0 0 4px; overflow-wrap: anywhere; }}
.lc-sub {{ display: block; font-size: 0.85em; opacity: 0.85; }}
/* the legend clears the top tick's label, half of which stands above the plot */
.lc-legend {{ display: flex; flex-wrap: wrap; gap: 2px 14px; list-style: none; margin: 0 0 0.8em; padding: 0;
  font-size: 0.9em; }}
.lc-legend li {{ display: flex; align-items: center; gap: 5px; margin: 0; }}
.lc-key {{ display: inline-block; width: 14px; height: 12px; background: var(--c); }}
.lc-key.lc-k-pale {{ opacity: {REMOVED_OPACITY}; background-image: repeating-linear-gradient(45deg,
  rgba(255,255,255,.7) 0 2px, transparent 2px 5px); }}
.lc-key.lc-k-outline {{ background: repeating-linear-gradient(45deg, var(--c) 0 1.5px, transparent 1.5px 5px);
  outline: 2px solid var(--c); outline-offset: -2px; }}
.lc-key.lc-k-mark {{ height: 0; border-top: 3px solid var(--body-text-color, {TEXT}); background: none; }}
.lc-key.lc-k-line {{ height: 0; border-top: 2px solid var(--c); background: none; }}
.lc-grid {{ display: grid; grid-template-columns: auto auto 1fr auto; grid-template-rows: var(--plot-h) auto; }}
.lc-ytitle {{ grid-area: 1 / 1; writing-mode: vertical-rl; transform: rotate(180deg); text-align: center;
  font-size: 0.9em; padding-left: 4px; }}
.lc-y {{ grid-area: 1 / 2; }}
.lc-y2 {{ grid-area: 1 / 4; }}
.lc-y, .lc-y2 {{ position: relative; min-width: 2.2em; font-size: 0.85em; }}
.lc-sizer {{ display: block; visibility: hidden; height: 0; overflow: hidden; padding: 0 6px; white-space: nowrap; }}
.lc-y span {{ position: absolute; right: 6px; transform: translateY(50%); white-space: nowrap; }}
.lc-y2 span {{ position: absolute; left: 6px; transform: translateY(50%); white-space: nowrap; }}
.lc-plot {{ grid-area: 1 / 3; position: relative; border-bottom: 1px solid rgba(128,128,128,.6); }}
.lc-gridline, .lc-zero {{ position: absolute; left: 0; right: 0; height: 0;
  border-top: 1px solid rgba(128,128,128,.25); }}
.lc-zero {{ border-top-color: rgba(128,128,128,.7); }}
.lc-cols {{ position: absolute; inset: 0; display: flex; }}
.lc-col {{ flex: 1 1 0; min-width: 0; position: relative; }}
.lc-col[data-key] {{ cursor: pointer; }}
.lc-col[data-key]:hover {{ background: rgba(128,128,128,.08); }}
.lc-bar {{ position: absolute; left: 8%; right: 8%; background: var(--c);
  bottom: calc((var(--b) - var(--lo)) / (var(--hi) - var(--lo)) * 100%);
  height: max(calc(var(--v) / (var(--hi) - var(--lo)) * 100%), 1px); }}
.lc-bar.lc-side {{ left: calc(8% + var(--i) * 84% / var(--n)); right: auto; width: calc(84% / var(--n)); }}
.lc-bar.lc-pale {{ opacity: {REMOVED_OPACITY}; background-image: repeating-linear-gradient(45deg,
  rgba(255,255,255,.7) 0 2px, transparent 2px 6px); }}
.lc-bar.lc-outline {{ background: repeating-linear-gradient(45deg, var(--c) 0 1.5px, transparent 1.5px 6px);
  box-shadow: inset 0 0 0 2px var(--c); }}
.lc-mark {{ position: absolute; left: 2%; right: 2%; height: 0;
  border-top: 3px solid var(--m, var(--body-text-color, {TEXT}));
  bottom: calc((var(--b) - var(--lo)) / (var(--hi) - var(--lo)) * 100%); }}
.lc-curve {{ position: absolute; inset: 0; width: 100%; height: 100%; overflow: visible; pointer-events: none; }}
.lc-curve polyline {{ fill: none; stroke-width: 2px; vector-effect: non-scaling-stroke; }}
.lc-dot {{ position: absolute; width: 7px; height: 7px; margin: 0 0 -3.5px -3.5px; border-radius: 50%;
  background: var(--c); pointer-events: none; }}
.lc-rule {{ position: absolute; pointer-events: none; }}
.lc-rule-y {{ left: 0; right: 0; height: 0; border-top: 2px var(--dash, dashed) var(--c); }}
.lc-rule-x {{ top: 0; bottom: 0; width: 0; border-left: 2px var(--dash, dashed) var(--c); }}
.lc-dotted {{ --dash: dotted; }}
.lc-note {{ position: absolute; font-size: 0.85em; white-space: nowrap; background: rgba(255,255,255,.75);
  padding: 0 3px; }}
.dark .lc-note {{ background: rgba(0,0,0,.6); }}
.lc-rule-y .lc-note {{ right: 0; bottom: 2px; }}
.lc-rule-x .lc-note {{ left: 4px; top: 0; }}
.lc-x {{ grid-area: 2 / 3; display: flex; font-size: 0.85em; }}
.lc-x span {{ flex: 1 1 0; min-width: 0; text-align: center; overflow: hidden; white-space: nowrap; padding-top: 3px; }}
.lc-x-up span {{ writing-mode: vertical-rl; transform: rotate(180deg); text-align: left; padding: 0 0 4px;
  line-height: 1; max-height: 7em; font-family: ui-monospace, monospace; }}
.lc-xtitle {{ text-align: center; font-size: 0.9em; margin-top: 2px; }}
/* lanes (Lanes): a label, then a row its spans are placed in by start and length on the x axis */
.lc-lanes-grid {{ display: grid; grid-template-columns: auto 1fr; row-gap: 4px; position: relative; }}
.lc-lane-label {{ font-size: 0.85em; padding-right: 6px; align-self: center; white-space: nowrap; }}
.lc-lane {{ position: relative; height: 1.9em; grid-column: 2; }}
/* the grid lines under the lanes: out of the grid's flow, in the lanes' area */
.lc-vlines {{ position: absolute; inset: 0; grid-column: 2; grid-row: 1 / span var(--rows); pointer-events: none;
  border-left: 1px solid rgba(128,128,128,.6); }}
.lc-vline {{ position: absolute; top: 0; bottom: 0; width: 0; border-left: 1px solid rgba(128,128,128,.25); }}
.lc-xticks {{ grid-column: 2; position: relative; height: 1.4em; font-size: 0.85em; }}
.lc-xticks span {{ position: absolute; top: 2px; transform: translateX(-50%); white-space: nowrap; }}
.lc-xticks span.lc-at-start {{ transform: none; }}
.lc-xticks span.lc-at-end {{ transform: translateX(-100%); }}
.lc-span {{ position: absolute; top: 0; bottom: 0; background: var(--c); overflow: hidden; white-space: nowrap;
  left: calc((var(--s) - var(--xlo)) / (var(--xhi) - var(--xlo)) * 100%);
  width: max(calc(var(--l) / (var(--xhi) - var(--xlo)) * 100%), 1px);
  font: 0.8em/1.9 ui-monospace, monospace; text-align: center; color: var(--body-text-color, {TEXT});
  font-style: normal; }}
.lc-span.lc-pale {{ opacity: {REMOVED_OPACITY}; }}
.lc-span.lc-outline {{ background: repeating-linear-gradient(45deg, var(--c) 0 1.5px, transparent 1.5px 6px);
  box-shadow: inset 0 0 0 2px var(--c); }}
.lc-span.lc-tint, .lc-span.lc-dashed, .lc-key.lc-k-tint, .lc-key.lc-k-dashed {{
  background: color-mix(in srgb, var(--c) 22%, transparent); border: 2px solid var(--c); }}
.lc-span.lc-dashed, .lc-key.lc-k-dashed {{ border-style: dashed; }}
.lc-key.lc-k-dash {{ height: 0; border-top: 3px solid var(--c); background: none; }}
/* small multiples: one shared scale, as many panels in a row as fit (five at 800 px, two on a phone) */
.lc-panels {{ display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px 6px; }}
.lc-panel-title {{ display: flex; flex-direction: column; align-items: center; font-size: 0.9em; line-height: 1.25;
  min-height: 5.2em; }}
.lc-panel-title span {{ font-size: 0.95em; }}
.lc-small .lc-ytitle {{ display: none; }}
.lc-empty {{ display: flex; align-items: center; justify-content: center; min-height: var(--plot-h);
  border: 1px dashed rgba(128,128,128,.4); border-radius: 6px; }}
.lc-empty p {{ margin: 0; padding: 12px; text-align: center; font-size: 1.05em; }}
"""
