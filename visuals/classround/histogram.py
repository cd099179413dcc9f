"""The class's draws as they arrive: one column per token, the bar its draws, the dash the count its probability
expects (draws x p), and one column for every less probable token together. Before the first draw, the bars are the
probabilities every draw is drawn from. Under it, the chi-square test's verdict once there are enough draws."""

import html

from decoding.classround.records import LEVEL, DrawRecord
from visuals.chart import Axis, Bar, Chart, Column, Key, Mark, figure_html, nice_axis
from visuals.theme import KEPT, OTHER, TEXT
from visuals.tokens import visible_token
from visuals.words import count

DRAWS, EXPECTED = "the class's draws", "the count each token's probability expects (draws × p)"
PROBABILITY = "the probability each draw is drawn with"
HEIGHT = 180
SHOWN_OTHER = 0.001  # the column of other tokens is drawn once they hold this much probability (or a draw)
UPRIGHT = 10  # columns whose labels fit across (a projector's chart, a phone's); more read upwards


def settings_words(settings: dict) -> str:
    """The round's knobs as a line: "temperature 0.7, top-p 0.9" (the ones that are off left out)."""
    t = settings["temperature"]
    words = ["greedy (temperature 0)" if t == 0 else f"temperature {t:g}"]
    if t != 0:
        words += [f"top-k {settings['top_k']}"] if settings["top_k"] else []
        words += [f"top-p {settings['top_p']:g}"] if settings["top_p"] < 1 else []
        words += [f"min-p {settings['min_p']:g}"] if settings["min_p"] > 0 else []
    return ", ".join(words)


def draws_chart(draw: DrawRecord, height: int = HEIGHT) -> str:
    """The histogram of `draw` (its probabilities, before the first draw)."""
    n = draw.total
    columns = [_column(token.text, token.id, token.p, drawn, n) for token, drawn in draw.shown]
    others = draw.kept - len(draw.shown)
    if others > 0 and (draw.other_p >= SHOWN_OTHER or draw.other):
        columns.append(_column(f"{count(others, 'other')}", None, draw.other_p, draw.other, n))
    if n:
        top = max([c.bars[0].value for c in columns] + [c.mark.value for c in columns if c.mark], default=1.0)
        y = nice_axis(max(top, 1.0), title="draws")
        title = f"Draw {draw.number}: {count(n, 'draw')} at {settings_words(draw.settings)}"
        sub = ""
        legend = (Key(DRAWS, KEPT), Key(EXPECTED, TEXT, "mark"))
    else:
        y = Axis(0.0, 1.0, (0.0, 0.25, 0.5, 0.75, 1.0), "probability", percent=True)
        title = f"Draw {draw.number}: no draws yet, at {settings_words(draw.settings)}"
        sub = ""
        legend = (Key(PROBABILITY, KEPT),)
    extra = {"data-total": n, "data-number": draw.number}
    chart = Chart(
        tuple(columns), y, title, sub, legend, height=height, vertical_labels=len(columns) > UPRIGHT, extra=extra
    )
    return figure_html(chart, "classround-histogram")


def _column(text: str, token: int | None, p: float, drawn: int, n: int) -> Column:
    label = visible_token(text) if token is not None else text
    data = (token if token is not None else -1, drawn, round(p, 6))
    if not n:
        bar = Bar(PROBABILITY, p, KEPT, hover=f"{label}: p = {p:.3f}", data=data)
        return Column(label, (bar,), key=token)
    colour = KEPT if token is not None else OTHER
    bar = Bar(DRAWS, drawn, colour, hover=f"{label}: {drawn} drawn, {n * p:.1f} expected (p = {p:.3f})", data=data)
    return Column(label, (bar,), Mark(EXPECTED, n * p), key=token)


def verdict_html(draw: DrawRecord) -> str:
    """One line over the histogram: what to press, or the chi-square test's verdict."""
    chi = draw.chi
    if draw.total == 0:
        line = "Press <b>Draw</b> on your page: one token, drawn with your own seed from these probabilities."
    elif chi is None:
        line = (
            f"{count(draw.total, 'draw')} so far: the chi-square test needs two tokens that each expect 5 draws "
            "(keep drawing, or press <b>Draw 100 each</b>)."
        )
    elif chi.fits:
        line = f"Chi-square test: p = {_p(chi.p_value)}, the draws fit the probabilities."
    else:
        line = (
            f"Chi-square test: p = {_p(chi.p_value)}, the draws do not fit the probabilities at the {LEVEL:.0%} level."
        )
    return f'<p class="classround-verdict">{line}</p>'


def details_html(draw: DrawRecord) -> str:
    """Under the histogram: the most probable token and how many a draw can take, the test's numbers, and the draw
    before this one."""
    lines = []
    if draw.shown:
        top = draw.shown[0][0]
        lines.append(
            f"A draw takes {html.escape(visible_token(top.text))} with p = {top.p:.2f}, the most probable of the "
            f"{count(draw.kept, 'token')} it can take."
        )
    chi = draw.chi
    if chi is not None:
        tail = f", the {count(chi.tail, 'less probable token')} as one" if chi.tail else ""
        lines.append(
            f"Chi-square {chi.statistic:.1f} on {chi.dof} degrees of freedom ({count(chi.bins, 'bin')}{tail}): draws "
            f"that do come from the probabilities score p under {LEVEL:.0%} one time in 100."
        )
    if draw.previous is not None:
        total, settings, top = draw.previous
        lines.append(
            f"The draw before: {count(total, 'draw')} at {html.escape(settings_words(settings))}, "
            f"most often {html.escape(visible_token(top))}."
        )
    return "".join(f'<p class="classround-note">{line}</p>' for line in lines)


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"
