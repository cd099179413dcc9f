"""One look for every figure, and one meaning per colour across the whole app.

Okabe-Ito colours, distinguishable with the common colour-vision deficiencies; every colour also comes
with a label or a pattern, never colour alone. Text is at least 4.5:1 against the white page (WCAG AA), so
it reads on a projector: grey text is dark grey, and a coloured label is drawn in `ink(colour)`, the same
hue darkened until it reads. Large fonts read on a projector.
"""

from functools import cache, cached_property

import orjson
import plotly.graph_objects as go
import plotly.io as pio

from decoding.stages import GRAMMAR, STAGES

# the fate of a candidate token
KEPT = "#0072B2"  # blue: survived every stage
CHOSEN = "#E69F00"  # orange: the token that was selected
FORCED = "#CC79A7"  # reddish purple: a token the learner forced
# removed by each filter, in its stage's own colour (decoding.stages), and by a constraint's grammar
REMOVED = {name: stage.colour for name, stage in STAGES.items() if stage.colour}
REMOVED[GRAMMAR] = "#882255"  # wine: a constraint's grammar (decoding.constrained)
REMOVED_OPACITY = 0.45
# phases and comparisons
PREFILL = "#009E73"
DECODE = "#0072B2"
SAMPLING = "#E69F00"
OTHER = "#999999"
SERIES = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
# one colour per batch size in the batching lab; CHOSEN (orange) and its neighbour vermillion are kept for flips
BATCH_COLOURS = [c for c in SERIES if c not in (CHOSEN, "#D55E00", "#F0E442", "#000000")] + [OTHER]

TEXT = "#555555"  # 7.5:1 on white; the page's dark mode lightens it (CSS in app.py)
ERROR = "#B00020"  # a message line's rule: 7.2:1 on white
PAGE = "#FFFFFF"  # the page behind every figure (their own backgrounds are transparent)
AA = 4.5  # WCAG AA contrast for normal-size text
GRID = "rgba(128,128,128,0.25)"
FONT_SIZE = 15

STAGE_LABELS = {name: stage.label for name, stage in STAGES.items()} | {GRAMMAR: "grammar"}


def fate_colour(removed_by: str | None, chosen: bool = False, forced: bool = False) -> str:
    if forced:
        return FORCED
    if chosen:
        return CHOSEN
    return KEPT if removed_by is None else REMOVED.get(removed_by, OTHER)


def contrast(a: str, b: str = PAGE) -> float:
    """WCAG contrast ratio of two #RRGGBB colours: 1 (same) to 21 (black on white)."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def ink(colour: str, on: str = PAGE) -> str:
    """The colour for text of this meaning: `colour` itself when it reads (4.5:1 on `on`), else the same hue
    darkened step by step until it does. Orange stays orange, only deeper: one meaning per colour."""
    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    while contrast(_hex(rgb), on) < AA:
        rgb = [int(v * 0.93) for v in rgb]
    return _hex(rgb)


def _hex(rgb: list[int]) -> str:
    return "#" + "".join(f"{v:02X}" for v in rgb)


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def look(title: str | None = None, height: int = 380) -> dict:
    """The shared look as plain layout data (axes included)."""
    axis = {"gridcolor": GRID, "zerolinecolor": GRID}
    return dict(
        title={"text": title, "x": 0.01, "font": {"size": FONT_SIZE + 2}} if title else None,
        height=height,
        margin={"l": 60, "r": 20, "t": 50 if title else 20, "b": 50},
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        font={"size": FONT_SIZE, "color": TEXT},
        legend={"bgcolor": "rgba(0,0,0,0)", "orientation": "h", "y": -0.2},
        hoverlabel={"font": {"size": FONT_SIZE}},
        xaxis=dict(axis),
        yaxis=dict(axis),
    )


def styled(fig: go.Figure, title: str | None = None, height: int = 380) -> go.Figure:
    """Apply the shared look to a figure and return it."""
    layout = look(title, height)
    axis = layout.pop("xaxis")
    del layout["yaxis"]
    fig.update_layout(**layout)
    fig.update_xaxes(**axis)
    fig.update_yaxes(**axis)
    return fig


def measured_title(fig: go.Figure, name: str, label: str) -> go.Figure:
    """The chart's name, and under it, smaller, what it was measured with (model, dtype, device): on one line the two
    ran past a chart 750 px wide."""
    text = f"{name}<br><span style='font-size:{FONT_SIZE - 2}px'>{label}</span>"
    # the two lines centred in a top margin tall enough to leave the subplots' own titles clear below them (anchored
    # at their top instead, plotly drew the first line above the figure's edge)
    fig.update_layout(title={"text": text, "x": 0.01, "font": {"size": FONT_SIZE + 2}}, margin={"t": 100})
    return fig


class Drawn:
    """A figure kept as the plain trace and layout data it was written as, and serialised from that data.

    gradio draws a figure from its `to_json()`. A plotly `Figure` built from the same data costs ~5 ms of Python
    (it makes an object per trace and deep-copies everything), and its `to_json()` copies it all again: on a
    shared 2-core server that is every student's every Step, three figures each. This writes the JSON plotly would
    write (its default template included, NaN as null) straight from the data. Read as a plotly figure (`.data`,
    `.layout`, `update_layout`...), it builds one on first use and from then on serialises that one."""

    def __init__(self, data: list[dict], layout: dict):
        self._plain = {"data": data, "layout": _titles_as_objects(layout)}

    @cached_property
    def figure(self) -> go.Figure:
        return go.Figure(self._plain, _validate=False)

    def to_json(self) -> str:
        if "figure" in self.__dict__:  # read or changed as a plotly figure: that figure is the truth now
            return self.figure.to_json()
        data = [{"type": "scatter", **_unset_dropped(trace)} for trace in self._plain["data"]]
        layout = {"template": _template(), **_unset_dropped(self._plain["layout"])}
        return orjson.dumps({"data": data, "layout": layout}, option=orjson.OPT_SERIALIZE_NUMPY).decode()

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.figure, name)


def _titles_as_objects(layout: dict) -> dict:
    """`title: "text"` as `title: {text: ...}` for the figure and each axis: the only form plotly.js 3 draws (a
    validated plotly figure converts it; unvalidated data must be written so)."""

    def fixed(part: dict) -> dict:
        title = part.get("title")
        return {**part, "title": {"text": title}} if isinstance(title, str) else part

    axes = {k: fixed(v) for k, v in layout.items() if k.startswith(("xaxis", "yaxis")) and isinstance(v, dict)}
    return fixed({**layout, **axes})


def _unset_dropped(value):
    """A property set to None is unset, as plotly reads it: left out (a None inside a data array stays: a gap)."""
    if isinstance(value, dict):
        return {k: _unset_dropped(v) for k, v in value.items() if v is not None}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [_unset_dropped(v) for v in value]
    return value


@cache
def _template() -> dict:
    """The template plotly puts into every figure it serialises (its default, "plotly" unless changed)."""
    return pio.templates[pio.templates.default].to_plotly_json()


def figure_from(data: list[dict], layout: dict) -> Drawn:
    """A figure from plain trace and layout data, without plotly's per-property validation or copies (see `Drawn`).
    The data here is written by this package and covered by its tests, so nothing invalid reaches the browser."""
    return Drawn(data, layout)


def empty_figure(message: str, height: int = 300) -> Drawn:
    """A blank figure that says what to do to fill it."""
    layout = look(None, height)
    for axis in ("xaxis", "yaxis"):
        layout[axis] = {**layout[axis], "visible": False}
    layout["annotations"] = [{"text": message, "showarrow": False, "font": {"size": FONT_SIZE + 1, "color": TEXT}}]
    return figure_from([], layout)


def css_rgb(hex_colour: str) -> str:
    """ "#555555" as the browser writes it in an SVG's style: "rgb(85, 85, 85)"."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"
