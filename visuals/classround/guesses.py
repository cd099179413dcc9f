"""Guess, then reveal: the class's guesses beside the model's own probabilities, as a chart (two bars per token: the
share of the class that guessed it, and the model's probability) and as a table; before the reveal, only how many
have guessed (their guesses would lead the others)."""

import html

from decoding.classround.records import GuessRecord
from visuals.chart import Axis, Bar, Chart, Column, Key, figure_html
from visuals.glossary import term
from visuals.theme import CHOSEN, KEPT
from visuals.tokens import visible_token
from visuals.words import count

CLASS, MODEL = "the class's guesses", "the model's probability"
HEIGHT = 230


def top1_line(g: GuessRecord) -> str:
    """How many guessed the model's most probable token: "12 of 27 guessed the top-1, ␣Paris (77%)"."""
    token = html.escape(visible_token(g.top1.text))
    return (
        f"{g.top1_guessed} of {g.guessed} guessed the {term('top-1')}, {token} ({g.top1.p:.0%} of the model's "
        f"probability, the {term('softmax')} of its {term('logit', 'logits')})."
    )


def waiting_html(g: GuessRecord, present: int) -> str:
    """Before the reveal: how many have guessed, and what Reveal will show."""
    return (
        f'<p class="classround-verdict">{count(g.guessed, "guess", "guesses")} from {count(present, "student")} here. '
        "Press <b>Reveal</b> to show the class's guesses beside the model's own probabilities.</p>"
    )


def guesses_chart(g: GuessRecord, height: int = HEIGHT) -> str:
    """The revealed guesses: per token, the share of the class that guessed it beside the model's probability."""
    n = max(g.guessed, 1)
    columns = []
    for token, guessed in g.counts:
        label = visible_token(token.text)
        share = Bar(
            CLASS, guessed / n, CHOSEN, hover=f"{label}: {count(guessed, 'guess', 'guesses')}", data=(token.id, guessed)
        )
        model = Bar(MODEL, token.p, KEPT, hover=f"{label}: p = {token.p:.3f}", data=(token.id, round(token.p, 6)))
        columns.append(Column(label, (share, model), key=token.id, grouped=True))
    top = max([b.value for c in columns for b in c.bars], default=0.0)
    y = Axis(0.0, 1.0, (0.0, 0.25, 0.5, 0.75, 1.0), "share", percent=True)
    if top < 0.5:
        y = Axis(0.0, 0.5, (0.0, 0.1, 0.2, 0.3, 0.4, 0.5), "share", percent=True)
    chart = Chart(
        tuple(columns),
        y,
        f"{count(g.guessed, 'guess', 'guesses')} revealed",
        "each token: the share of the class that guessed it, beside the model's probability",
        (Key(CLASS, CHOSEN), Key(MODEL, KEPT)),
        height=height,
        vertical_labels=len(columns) > 8,
        extra={"data-guessed": g.guessed},
    )
    return figure_html(chart, "classround-guesses")


def guesses_table(g: GuessRecord, rows: int = 6) -> str:
    """The tokens the class guessed most, with the model's probability and rank (the record holds the model's top ten,
    so a token below them is "below 10")."""
    ranked = sorted(g.counts, key=lambda tc: -tc[0].p)
    rank = {token.id: str(k + 1) if k < 10 else "below 10" for k, (token, _) in enumerate(ranked)}
    guessed = sorted((tc for tc in g.counts if tc[1]), key=lambda tc: (-tc[1], -tc[0].p))[:rows]
    if not guessed:
        return '<p class="classround-verdict">Nobody guessed at this step.</p>'
    body = "".join(
        f"<tr><td>{html.escape(visible_token(t.text))}</td><td>{n}</td><td>{t.p:.1%}</td><td>{rank[t.id]}</td></tr>"
        for t, n in guessed
    )
    head = "<tr><th>token</th><th>guesses</th><th>model's p</th><th>model's rank</th></tr>"
    return f'<table class="classround-table">{head}{body}</table>'
