"""The speculative tab's two views, each one patched element of the page (ui/patch.py): the round (its chips, its
two charts, its words, the early-exit draft beside the logit lens) and the whole run (its words, tokens per round,
kept by position, the timing beside plain decoding).

A Round changes all of the round view and adds one column to the run's chart: a click's answer is these two
elements (and the session id), not ten outputs; the page replaces what changed and appends the new round's column.
Each part keeps the element id it had as a component of its own (`#speculative-verify`, `#speculative-run`, ...), so
the tests, the class plans and the benchmark find it where they did.
"""

from visuals.chart import empty_html, figure_html, lines_html, plot_style, ticks_html
from visuals.parts import Parts
from visuals.speculative import charts

ROUND_SLOTS = ("chips", "verify", "decisive", "status", "text", "exit-lens", "exit-agree")
RUN_BLANK = "Run a round: each round's accepted guesses appear here"


def round_view(
    chips: str,
    verify: str = "",
    decisive: str = "",
    status: str = "",
    text: str = "",
    exit_lens: str = "",
    exit_agree: str = "",
) -> Parts:
    """The round as the page shows it, each part a slot the next round replaces: the chips, the verify chart beside
    the decisive one, the round's words, the text so far, and the lens at L beside the final layer."""
    verify = verify or empty_html(charts.VERIFY_BLANK, 200)
    decisive = decisive or empty_html(charts.DECISIVE_BLANK, 200)
    inner = dict(zip(ROUND_SLOTS, (chips, verify, decisive, status, text, exit_lens, exit_agree)))
    div = {name: f'<div id="speculative-{name}">{body}</div>' for name, body in inner.items()}
    whole = (
        f'<div class="speculative-view">{div["chips"]}'
        f'<div class="speculative-charts">{div["verify"]}{div["decisive"]}</div>'
        f'<div class="speculative-words">{div["status"]}{div["text"]}</div>{div["exit-lens"]}{div["exit-agree"]}</div>'
    )
    return Parts(html=whole, shape=("round",), slots={f"#speculative-{name}": inner[name] for name in ROUND_SLOTS})


def run_view(rounds, k: int, by_position, caption: str = "", speed: str = "", timeline: str = "") -> Parts:
    """The run so far: its words and its two charts on the left, the timing on the right; a new round appends its
    column (and label) to the rounds chart and replaces the rest."""
    timeline = timeline or empty_html(charts.TIMELINE_BLANK, 120)
    slots = {"#speculative-run-text": caption, "#speculative-speed": speed, "#speculative-timeline": timeline}
    if not rounds:
        run, shape, strips, attrs = empty_html(RUN_BLANK, 200), ("blank",), {}, {}
    else:
        chart, positions = charts.rounds_chart(rounds, k), charts.positions_figure(by_position)
        run = (
            f'<div class="speculative-run-charts"><div id="speculative-rounds">{figure_html(chart)}</div>'
            f'<div id="speculative-positions">{positions}</div></div>'
        )
        columns, labels = charts.round_parts(rounds, k)
        shape = ("rounds", k, chart.label_every)
        strips = {"#speculative-rounds .lc-cols": columns, "#speculative-rounds .lc-x": labels}
        slots |= {
            "#speculative-rounds .lc-y": ticks_html(chart.y),
            "#speculative-rounds .lc-lines": lines_html(chart.y),
            "#speculative-positions": positions,
        }
        attrs = {("#speculative-rounds .lc-plot", "style"): plot_style(chart.y)}
    left = f'<div id="speculative-run-text">{caption}</div><div id="speculative-run">{run}</div>'
    right = f'<div id="speculative-speed">{speed}</div><div id="speculative-timeline">{timeline}</div>'
    whole = f'<div class="speculative-run-view"><div>{left}</div><div>{right}</div></div>'
    return Parts(html=whole, shape=shape, strips=strips, slots=slots, attrs=attrs)
