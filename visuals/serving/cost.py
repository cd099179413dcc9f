"""The decode roofline from this server's own traffic: the median time of one forward pass against the students in
it, beside the same students one after another (students × the time of a 1-student pass).

Decode is memory-bound: a pass reads every weight once, whether it holds one student's next token or thirty, so the
bars grow slowly while the dashes (one after another) climb in a straight line. An HTML chart (visuals.chart), as it
is redrawn on every live refresh; no torch, no gradio.
"""

from visuals.chart import Bar, Chart, Column, Html, Key, Mark, empty_html, figure_html, nice_axis
from visuals.glossary import term
from visuals.serving.traffic import NO_TRAFFIC, num
from visuals.theme import DECODE, OTHER, ink
from visuals.words import count

TITLE = Html(f"The decode {term('roofline')}, from this server's own traffic")
PACKED = "one packed pass (median)"
HEIGHT = 150  # the plot: after Open, its button and both charts' axes share a 1280x720 screen


def tick_time_figure(summary: dict, solo_ms: float | None = None) -> str:
    """A column per pass size up to the largest seen: its median time (hover: over how many passes, per student),
    and a dash at that many students one after another (from the measured 1-student pass, else `solo_ms`)."""
    by_rows = {int(r): ms for r, ms in summary.get("median_ms_by_rows", {}).items()}
    if not by_rows:
        return empty_html(NO_TRAFFIC, HEIGHT)
    counts = {int(r): n for r, n in summary.get("rows_histogram", {}).items()}
    big = max(by_rows)
    one = by_rows.get(1, solo_ms)
    after = f"one after another: students × {num(one)} ms" if one else ""
    columns = []
    for rows in range(1, big + 1):
        bars = ()
        if rows in by_rows:
            ms, n = by_rows[rows], counts.get(rows, 0)
            hover = f"{rows} students: {ms:.0f} ms over {n} passes, {ms / rows:.1f} ms per student"
            bars = (Bar(PACKED, ms, DECODE, hover=hover, data=(n, ms / rows)),)
        mark = Mark(after, rows * one, ink(OTHER)) if one else None
        columns.append(Column(str(rows), bars, mark=mark, shown=str(rows) if _named(rows, big) else ""))
    top = max([*by_rows.values(), big * one if one else 0.0])
    note = f"{count(big, 'student')}: {num(by_rows[big] / big)} ms per token"
    if one and big > 1:
        note += f" · alone: {num(one)} ms per token"
    legend = (Key(PACKED, DECODE),) + ((Key(after, ink(OTHER), "dash"),) if one else ())
    chart = Chart(
        columns=tuple(columns),
        y=nice_axis(top, title="time of the pass (ms)"),
        title=TITLE,
        sub=note,
        legend=legend,
        height=HEIGHT,
        x_title="students in one forward pass",
    )
    return figure_html(chart, cls="serving-cost-chart")


def _named(rows: int, big: int) -> bool:
    """Every pass size named up to 12; past that, 1 and every fifth (whole students on the axis, always)."""
    return big <= 12 or rows == 1 or rows % 5 == 0
