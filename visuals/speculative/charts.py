"""Speculative decoding, drawn: one round (where the guesses came from, how each was judged) and a whole run
(accepted per round, acceptance by draft position, where the time went, the speed-up over plain decoding).

Every chart here is HTML (visuals.chart): the round's two are redrawn on every Round, the run's with it, and a
plotly chart among a click's outputs cost the page most of the click (docs/measurements/speculative.md).

Colours keep their app-wide meaning: blue = kept (an accepted guess), orange = chosen (the bonus token the target
adds), vermillion = removed (a rejected guess), grey = never looked at; reddish purple, the colour of a token that
did not come from the model's own choice, marks the draft; yellow marks the n-gram prompt lookup matched. Each also
has its look (solid, hatched outline, pale) or its mark in the label, never colour alone.
Takes `decoding.speculative.records`; no torch, no gradio.
"""

from visuals.chart import (
    Axis,
    Bar,
    Chart,
    Column,
    Key,
    Lane,
    Lanes,
    Mark,
    Span,
    column_html,
    empty_html,
    figure_html,
    label_html,
    lanes_html,
    nice_axis,
)
from visuals.speculative.round import DRAFT, REJECTED
from visuals.theme import CHOSEN, DECODE, KEPT, OTHER, PREFILL, SAMPLING, ink
from visuals.tokens import visible_token

P, Q = "p: target", "q: draft"
U = "uniform u (keep if below)"
RESIDUAL = "residual max(0, p − q), renormalised"
KEPT_NAME, OWN_NAME, DRAFTED_NAME = "guesses kept", "target's own token", "guesses drafted"
U_COLOUR = ink(CHOSEN)  # the dashes read against any bar and the page
DRAFT_INK = ink(DRAFT)
# a guess's verdict: its colour, its look, and its mark (as on the round's chips)
VERDICTS = {
    True: ("kept", KEPT, "solid", "✓"),
    False: ("rejected", REJECTED, "outline", "✗"),
    None: ("not checked", OTHER, "pale", "·"),
}
PROBABILITY = Axis(0.0, 1.05, (0.0, 0.5, 1.0), "probability")
VERIFY_BLANK = "Each guess, judged by the target, appears here"
DECISIVE_BLANK = "The distribution that decided the round appears here"


def verify_figure(rnd, greedy: bool) -> str:
    """Per verified position: p(guess) from the target beside q(guess) from the draft; under it, the chance of
    keeping it, min(1, p/q), with the uniform drawn against it (greedy: whether it is the target's argmax)."""
    checks = [c for c in rnd.checks if c.draft_id is not None]
    if not checks:
        return empty_html("No guesses this round: the verify pass was one plain decode step", 200)
    labels = [f"{c.index + 1}: {visible_token(c.draft_text)}" for c in checks]
    judged = Chart(
        columns=tuple(_judged(c, label) for c, label in zip(checks, labels)),
        y=PROBABILITY,
        title="Each guess: the target's p beside the draft's q",
        legend=(Key(P, KEPT), Key(Q, DRAFT, "outline")),
        height=90,  # both panels and their labels under a round's chips, on a 1280x720 screen
    )
    name = "verdict" if greedy else "chance to keep"
    verdicts = [VERDICTS[c.accepted] for c in checks]
    seen = list(dict.fromkeys(v[0] for v in verdicts))
    legend = [Key(word, colour, look) for word, colour, look, _ in VERDICTS.values() if word in seen]
    if not greedy:
        legend.append(Key(U, U_COLOUR, "dash"))
    kept = Chart(
        columns=tuple(_kept(c, label, name, greedy) for c, label in zip(checks, labels)),
        # greedy: a full bar per checked guess, coloured by its verdict (an empty bar for a rejection would not show)
        y=Axis(0.0, 1.05, () if greedy else (0.0, 0.5, 1.0), "argmax?" if greedy else "keep?"),
        legend=tuple(legend),
        height=60,
        vertical_labels=True,
    )
    return figure_html(judged, cls="speculative-judged") + figure_html(kept, cls="speculative-kept")


def _judged(c, label: str) -> Column:
    hover = f"guess {c.index + 1}: {visible_token(c.draft_text)}"
    bars = (
        Bar(P, c.p, KEPT, hover=f"{hover}\np (target) {c.p:.3f}", data=(c.p,)),
        Bar(Q, c.q, DRAFT, "outline", hover=f"{hover}\nq (draft) {c.q:.3f}", data=(c.q,)),
    )
    return Column(label, bars, grouped=True, shown="")  # named once, under the verdicts


def _kept(c, label: str, name: str, greedy: bool) -> Column:
    word, colour, look, mark = VERDICTS[c.accepted]
    value = (1.0 if c.accepted is not None else 0.3) if greedy else min(1.0, c.p / c.q)
    hover = f"guess {c.index + 1}: {word}\ntarget's argmax here: {visible_token(c.target_text)}"
    if not greedy:
        hover += f"\nmin(1, p/q) = {value:.3f}" + (f"\nu = {c.uniform:.3f}" if c.uniform is not None else "")
    bar = Bar(name, value, colour, look, hover=hover, data=(word,))
    u = Mark(U, c.uniform, U_COLOUR) if not greedy and c.uniform is not None else None
    return Column(label, (bar,), mark=u, shown=f"{mark} {label}")


def decisive_figure(rnd) -> str:
    """The position that decided the round: the first rejection (with its residual max(0, p - q), renormalised), or
    the bonus position when every guess was kept. The target's distribution beside the draft's."""
    check = next((c for c in rnd.checks if c.accepted is False), rnd.checks[-1])
    residual = {t: r for t, _, r in rnd.residual}
    columns = []
    for token, text, p, q in check.top:
        shown = visible_token(text)
        bars = [Bar(P, p, KEPT, hover=f"{shown}\np (target) {p:.3f}")]
        if check.draft_id is not None:
            bars.append(Bar(Q, q, DRAFT, "outline", hover=f"{shown}\nq (draft) {q:.3f}"))
        if rnd.residual:
            r = residual.get(token, 0.0)
            bars.append(Bar(RESIDUAL, r, SAMPLING, "pale", hover=f"{shown}\nresidual {r:.3f}"))
        columns.append(Column(shown, tuple(bars), key=token, grouped=True))
    legend = [Key(P, KEPT)]
    if check.draft_id is not None:
        legend.append(Key(Q, DRAFT, "outline"))
    if rnd.residual:
        legend.append(Key(RESIDUAL, SAMPLING, "pale"))
    where = "rejected here" if check.accepted is False else "bonus position"
    chart = Chart(
        columns=tuple(columns),
        y=Axis(0.0, 1.05, (0.0, 0.5, 1.0), "probability after the samplers"),
        title=f"Position {check.index + 1} ({where}) → {visible_token(rnd.bonus_text)}",
        legend=tuple(legend),
        height=160,
        vertical_labels=True,
    )
    return figure_html(chart, cls="speculative-decisive")


def round_column(r) -> Column:
    """One round on the run chart: its kept guesses and the target's own token stacked, a dash at the guesses
    drafted."""
    own = r.kept - r.accepted
    hover = f"round {r.index + 1}: {r.accepted} of {len(r.drafted)} guesses kept, +{own} target's own"
    bars = (
        Bar(KEPT_NAME, r.accepted, KEPT, hover=hover),
        Bar(OWN_NAME, own, CHOSEN, "outline", base=r.accepted, hover=hover),
    )
    return Column(str(r.index + 1), bars, mark=Mark(DRAFTED_NAME, len(r.drafted), DRAFT_INK))


def rounds_chart(rounds, k: int) -> Chart:
    """Tokens each round added (kept guesses + the target's own) against the guesses drafted; its axis fixed at
    K + 1 for the run, so a new round adds its column and nothing else."""
    every = label_every(len(rounds))
    return Chart(
        columns=tuple(round_column(r) for r in rounds),
        y=nice_axis(k + 1, title="tokens"),
        title="Tokens each round wrote",
        legend=(Key(KEPT_NAME, KEPT), Key(OWN_NAME, CHOSEN, "outline"), Key(DRAFTED_NAME, DRAFT_INK, "dash")),
        height=150,
        x_title="round",
        label_every=every,
    )


def label_every(columns: int) -> int:
    """Every round named up to 30, then one in 5, 25: steps only when the run passes those, so a new round only adds
    its column until then."""
    return next(every for limit, every in ((30, 1), (150, 5)) if columns <= limit) if columns <= 150 else 25


def round_parts(rounds, k: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The run chart's columns and labels, one each per round: what a new round appends."""
    every = label_every(len(rounds))
    return (
        tuple(column_html(round_column(r)) for r in rounds),
        tuple(label_html(str(r.index + 1), i, every) for i, r in enumerate(rounds)),
    )


def positions_figure(by_position: list[tuple[int, int]]) -> str:
    """How often each draft position was kept, of the times it was checked (a guess after a rejection is never
    checked)."""
    columns = tuple(
        Column(
            str(i + 1),
            (Bar("kept / checked", a / n if n else 0.0, KEPT, hover=f"position {i + 1}: kept {a} of {n} checked"),),
            shown=f"{i + 1} ({a}/{n})",
        )
        for i, (a, n) in enumerate(by_position)
    )
    chart = Chart(
        columns=columns,
        y=Axis(0.0, 1.05, (0.0, 0.5, 1.0), "", percent=True),
        title="Kept, by draft position",
        height=150,
        x_title="position (kept/checked)",
        vertical_labels=len(by_position) > 6,
    )
    return figure_html(chart, cls="speculative-positions")


TIMELINE_NAMES = {
    "prefill": "prefill",
    "draft": "draft",
    "verify": "verify pass",
    "accept": "accept",
    "plain": "plain decode pass (one token)",
}
TIMELINE_LOOKS = {  # each phase its colour and its look: the phases side by side on one lane read apart in grey too
    "prefill": (PREFILL, "solid"),
    "draft": (DRAFT, "outline"),
    "verify": (DECODE, "solid"),
    "accept": (SAMPLING, "pale"),
    "plain": (OTHER, "solid"),
}
TIMELINE_BLANK = "Run to end: both ways of decoding are timed here, side by side"


def timeline_figure(rounds, prefill_ms: float, plain_prefill_ms: float, plain_token_ms: list[float]) -> str:
    """Where the time went, side by side: speculative (prefill, then each round's draft, verify and accept) and
    plain decoding (prefill, then one pass per token), each segment placed at its start. Drawn once per run."""
    if not rounds or not plain_token_ms:
        return empty_html(TIMELINE_BLANK, 120)
    spec = [_segment("prefill", 0.0, prefill_ms, "prefill")]
    for r in rounds:
        for phase, ms in (("draft", r.draft_ms), ("verify", r.verify_ms), ("accept", r.accept_ms)):
            spec.append(_segment(phase, spec[-1].start + spec[-1].length, ms, f"round {r.index + 1}"))
    plain = [_segment("prefill", 0.0, plain_prefill_ms, "prefill")]
    for i, ms in enumerate(plain_token_ms):
        plain.append(_segment("plain", plain[-1].start + plain[-1].length, ms, f"token {i + 1}"))
    end = max(spec[-1].start + spec[-1].length, plain[-1].start + plain[-1].length)
    x = nice_axis(end, title="milliseconds since the start (waiting for the model's turn not counted)")
    legend = tuple(Key(TIMELINE_NAMES[p], *TIMELINE_LOOKS[p]) for p in TIMELINE_NAMES)
    lanes = (Lane("speculative", tuple(spec)), Lane("plain", tuple(plain)))
    return lanes_html(Lanes(lanes, x, title="Where the time went", legend=legend), cls="speculative-timeline")


def _segment(phase: str, start: float, ms: float, what: str) -> Span:
    colour, look = TIMELINE_LOOKS[phase]
    name = TIMELINE_NAMES[phase]
    return Span(name, start, ms, colour, look, hover=f"{what} · {name}: {ms:.1f} ms (from {start:.0f} ms)")
