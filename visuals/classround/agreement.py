"""Greedy together: did every student's greedy run write the same tokens? One cell per step (the token most students
wrote there, marked where not everyone did), the verdict, the scheduler's passes behind the class's steps, and why a
shared pass can change greedy's pick at all (float noise)."""

import html

from decoding.classround.records import GreedyRecord
from visuals.glossary import term
from visuals.tokens import visible_token
from visuals.words import count


def verdict(g: GreedyRecord) -> str:
    """One line: every token agreed, or the first step where one did not and who wrote what there."""
    if not g.students:
        return (
            "Each student presses <b>Step greedy</b> or <b>Run greedy</b>: their own greedy run on this text, "
            f"temperature 0, the {term('argmax')} at every step."
        )
    if len(g.students) == 1:
        return "One student has stepped so far: agreement needs two."
    if g.split is None:
        return (
            f'<b class="classround-agree">Every token agreed</b>: {count(len(g.students), "student")}, '
            f"{count(g.compared, 'step')} compared."
        )
    s = g.split
    others = {}
    for student, token in s.others:
        others.setdefault(visible_token(token.text), []).append(student)
    wrote = "; ".join(f"{', '.join(who)} wrote {html.escape(t)}" for t, who in others.items())
    writers = len(g.students) - len(s.others)
    return (
        f'<b class="classround-split">At step {s.step + 1} not every token agreed</b>: {writers} wrote '
        f"{html.escape(visible_token(s.majority.text))}; {html.escape(wrote)}."
    )


def passes_html(g: GreedyRecord) -> str:
    """The scheduler's passes behind the class's greedy steps, and why a shared one can change greedy's pick."""
    noise = f"up to {g.noise:.1e} on this server" if g.noise else "measured when the server starts"
    passes = (
        f"Their steps were chosen from {count(g.passes, 'forward pass', 'forward passes')}, {g.shared} of them shared "
        f"with other sessions (up to {g.most_rows} in one). "
        if g.passes
        else "Their steps go through the server's shared forward passes, packed with the class's. "
    )
    line = (
        f"{passes}A shared pass adds the same numbers in another order, so a {term('logit')} can differ from the one "
        f"computed alone by float noise, the {term('batching noise')} ({noise}): greedy's pick can change only "
        "where the top two tokens are closer than that."
    )
    if g.across_servers:
        line += (
            " This class is spread over several servers: each student's greedy run lives on their own server, and its "
            "passes are shared only with that server's sessions (the noise above is this server's)."
        )
    return f'<p class="classround-note">{line}</p>'


def steps_html(g: GreedyRecord) -> str:
    """A cell per greedy step: the token most students wrote (split: the step where they first did not)."""
    longest = max((len(tokens) for _, tokens in g.students), default=0)
    cells = []
    for k in range(longest):
        at = [tokens[k] for _, tokens in g.students if len(tokens) > k]
        top = max(set(at), key=lambda t: (at.count(t), -t))
        look = "split" if g.split is not None and k == g.split.step else "after" if g.split and k > g.split.step else ""
        text = html.escape(visible_token(g.texts.get(top, "?")))
        cells.append(f'<span class="classround-cell {look}" title="step {k + 1}: {len(at)} students">{text}</span>')
    return f'<div class="classround-cells">{"".join(cells)}</div>' if cells else ""
