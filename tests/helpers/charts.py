"""An HTML chart (visuals.chart) read back as data, the way the browser tests read it from the page
(tests/helpers/pages.py, FIGURE): its series by name in the order they first appear, each with its x labels, y
values and hover numbers; its title, the line under it, its notes, its legend and its y range."""

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Series:
    name: str
    x: list = field(default_factory=list)
    y: list[float] = field(default_factory=list)
    customdata: list = field(default_factory=list)
    looks: list[str] = field(default_factory=list)  # each bar's or span's look (LOOKS; "" for a mark or a dot)
    colours: list[str] = field(default_factory=list)


@dataclass
class ChartRead:
    data: list[Series] = field(default_factory=list)
    title: str = ""
    sub: str = ""
    annotations: list[str] = field(default_factory=list)
    legend: list[str] = field(default_factory=list)
    y_range: tuple[float, float] | None = None
    labels: list[str] = field(default_factory=list)  # the x labels, in column order
    keys: list[str] = field(default_factory=list)  # each column's data-key
    charts: int = 0  # how many <figure class="lc"> (a panel grid has one per panel)

    def series(self, name: str) -> Series:
        return next(s for s in self.data if s.name == name)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.data]


# a bar's or a span's look (visuals.chart.SPAN_LOOKS): its class is "lc-" and the look
LOOKS = ("solid", "pale", "outline", "tint", "dashed")
_CSS_VAR = re.compile(r"--(\w+):\s*([^;]+)")


class _Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.capture, self.stack = ChartRead(), None, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        self.stack.append((tag, classes))
        if "lc" in classes and tag == "figure":
            self.out.charts += 1
        style = dict(_CSS_VAR.findall(a.get("style") or ""))
        if "lc-plot" in classes and self.out.y_range is None:
            self.out.y_range = (float(style["lo"]), float(style["hi"]))
        if "lc-col" in classes:
            self.out.keys.append(a.get("data-key"))
        if "data-series" in a:
            name = a["data-series"]
            s = next((s for s in self.out.data if s.name == name), None)
            if s is None:
                s = Series(name)
                self.out.data.append(s)
            s.x.append(a.get("data-x"))
            s.y.append(float(a["data-y"]))
            s.customdata.append(json.loads(a["data-c"]) if "data-c" in a else None)
            s.looks.append(next((c[3:] for c in classes if c.startswith("lc-") and c[3:] in LOOKS), ""))
            s.colours.append(style.get("c", "").strip())
        for cls, target in (("lc-head", "title"), ("lc-sub", "sub"), ("lc-note", "note"), ("lc-legend", "legend")):
            if cls in classes:
                self.capture = [target, ""]
        if tag == "li" and self.capture is None and any("lc-legend" in c for _, c in self.stack[:-1]):
            self.capture = ["legend", ""]
        if tag == "span" and any("lc-x" in c for _, c in self.stack[:-1]) and self.capture is None:
            self.capture = ["label", ""]

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()
        if self.capture is not None and tag in ("span", "li", "figcaption"):
            target, text = self.capture
            self.capture = None
            if target == "title":
                self.out.title = text
            elif target == "sub":
                self.out.sub = text
            elif target == "note":
                self.out.annotations.append(text)
            elif target == "legend" and tag == "li":
                self.out.legend.append(text)
            elif target == "label":
                self.out.labels.append(text)

    def handle_data(self, data):
        if self.capture is not None:
            self.capture[1] += data


def read_chart(html: str) -> ChartRead:
    """The chart(s) in `html` as data (a grid of panels reads as one, its series across them)."""
    reader = _Reader()
    reader.feed(html)
    return reader.out
