"""The round as a page shows it, one patched element (visuals.parts): the projector's view of the whole class, a
student's view of their own part, and the empty view before either. Its root says who looks (`data-role`: teacher,
student, visitor) and the round's kind (`data-kind`): the page's style sheet shows each person the controls that are
theirs from these alone, so a click's answer needs no other output. Its parts are a few slots (the head, the context,
the main chart, the notes), so a refresh sends only what changed."""

import html

from decoding.classround.records import GREEDY, GUESS, SAMPLE, RoundRecord, SeatRecord
from visuals.chart import empty_html
from visuals.classround.agreement import passes_html, steps_html, verdict
from visuals.classround.guesses import guesses_chart, guesses_table, top1_line, waiting_html
from visuals.classround.histogram import details_html, draws_chart, settings_words, verdict_html
from visuals.glossary import stop_reason
from visuals.parts import Parts
from visuals.theme import CHOSEN, FORCED, KEPT
from visuals.tokens import visible_text, visible_token
from visuals.words import count

KIND_LABELS = {GUESS: "Guess, then reveal", SAMPLE: "Sample together", GREEDY: "Greedy together"}
TEACHER, STUDENT, VISITOR = "teacher", "student", "visitor"
CONTEXT_CHARS = 160  # the end of the context shown: what the next token follows
# the view's parts, top to bottom: who and where, the text so far, one line of verdict, the chart, the details
SLOTS = (
    ".classround-v-head",
    ".classround-v-context",
    ".classround-v-verdict",
    ".classround-v-main",
    ".classround-v-notes",
)
BLANK = "Start a round (teacher), or type the code the projector shows and press Join (student)."


def link(code: str) -> str:
    """A round's link, relative to the page (the page's script writes it out whole, with its address)."""
    return f"?tab=classround&round={code}"


def blank_parts(message: str = BLANK) -> Parts:
    return _parts(VISITOR, "", {SLOTS[3]: empty_html(message, 200)})


def projector_parts(r: RoundRecord) -> Parts:
    """The teacher's view: the code and link, who is here, the context, and the kind's chart and notes."""
    here = f"{count(r.present, 'student')} here" + (f" ({r.left} left)" if r.left else "")
    address = html.escape(link(r.code))
    join = (
        '<span class="classround-locked">Locked: no new students</span> '
        '<button class="classround-lock" title="let new students join again">Unlock</button>'
        if r.locked
        else f'<span class="classround-join">Join: <a class="classround-link" href="{address}">{address}</a></span> '
        '<button class="classround-lock" title="no new students: once the class is in">Lock joining</button>'
    )
    join = "" if r.ended else join
    head = (
        f'<span class="classround-kind">{KIND_LABELS[r.kind]}</span> · Round <b class="classround-code">{r.code}</b> · '
        f"{seats_html(r, here)}<br>{join}"
    )
    verdict, main, notes = _kind_parts(r)
    if r.ended:
        verdict, main, notes = "", empty_html(_ended(r), 200), ""
    attrs = {
        (".classround-view", "data-total"): str(r.draw.total if r.draw else 0),
        (".classround-view", "data-locked"): "1" if r.locked else "",
        # what the page's script asks the server after (ui/classround/script.py): the round, and its every change
        (".classround-view", "data-code"): r.code,
        (".classround-view", "data-version"): str(r.version),
    }
    slots = dict(zip(SLOTS, (head, context_html(r), verdict, main, notes)))
    return _parts(TEACHER, r.kind, slots, attrs)


def seats_html(r: RoundRecord, here: str) -> str:
    """Who is here, and, opened, each seat by its id with a button that removes it (the page's script sends it)."""
    if not r.seats or r.ended:
        return here
    buttons = "".join(
        f'<button class="classround-seat" data-seat="{html.escape(s)}" title="remove {html.escape(s)} from the round">'
        f"{html.escape(s)} ✕</button>"
        for s in r.seats
    )
    return (
        f'<details class="classround-seats"><summary>{here}</summary><span class="classround-note">Each student\'s '
        f"page says who it is; remove a seat that is no one's:</span> {buttons}</details>"
    )


def student_parts(r: RoundRecord, seat: SeatRecord, ping: str = "") -> Parts:
    """A student's view: the round, the context (read-only), and their own part in the kind's task. `ping`: what the
    page asks the round with, so the round hears it is open (ui/classround/seats.py)."""
    head = (
        f'<span class="classround-kind">{KIND_LABELS[r.kind]}</span> · Round <b>{r.code}</b> · '
        f"step {r.step + 1} · you are {html.escape(seat.student)} (seed {seat.seed})"
    )
    if r.ended:
        task = f'<p class="classround-verdict">{_ended(r)}</p>'
    elif r.done:
        task = f'<p class="classround-verdict">The text has ended ({stop_reason(r.done)}): wait for the teacher.</p>'
    else:
        task = {GUESS: _guess_task, SAMPLE: _sample_task, GREEDY: _greedy_task}[r.kind](r, seat)
    attrs = {
        (".classround-view", "data-serial"): str(seat.last_serial),
        (".classround-view", "data-drew"): str(seat.drawn[-1] if seat.drawn else ""),
        # what the page's script asks the server after (ui/classround/script.py): the round, and what it shows
        (".classround-view", "data-code"): r.code,
        (".classround-view", "data-shown"): str(r.shown),
        (".classround-view", "data-ping"): ping,
        # a finished greedy run: its buttons go (the page's style sheet reads it)
        (".classround-view", "data-greedy"): "done" if r.greedy and len(seat.greedy) >= r.greedy.length else "",
    }
    return _parts(STUDENT, r.kind, {SLOTS[0]: head, SLOTS[1]: context_html(r), SLOTS[3]: task}, attrs)


def prompt_end(r: RoundRecord, chars: int = CONTEXT_CHARS) -> str:
    """The prompt's last tokens that fit in `chars` (whole tokens: a chat template's special tokens are never cut),
    "…" before them when that is not all of it."""
    tokens = [visible_text(t) for t in r.prompt_tokens] or [visible_text(r.prompt)]
    kept, used = [], 0
    for token in reversed(tokens):
        if kept and used + len(token) > chars:
            return "…" + "".join(reversed(kept))
        kept.append(token)
        used += len(token)
    return "".join(reversed(kept))


def context_html(r: RoundRecord) -> str:
    """The end of the prompt, then the tokens appended (each marked by who chose it), then the slot of the next."""
    shown = prompt_end(r)
    chips = "".join(
        f'<span class="classround-tok {a.how}" title="step {k + 1}: '
        f'{"the model" if a.how == "model" else "the class"} chose it (p = {a.token.p:.3f})">'
        f"{html.escape(visible_token(a.token.text))}</span>"
        for k, a in enumerate(r.appended)
    )
    end = "" if r.done else '<span class="classround-next" title="the next token">?</span>'
    return f'<p class="classround-context"><span class="classround-prompt">{html.escape(shown)}</span>{chips}{end}</p>'


def _kind_parts(r: RoundRecord) -> tuple[str, str, str]:
    """The projector's verdict line, chart and notes for the round's kind."""
    if r.done:
        return "", empty_html(f"The text has ended ({r.done}): start a new round to go on.", 200), ""
    if r.kind == SAMPLE:
        return verdict_html(r.draw), draws_chart(r.draw), details_html(r.draw)
    if r.kind == GUESS:
        g = r.guesses
        if not g.revealed:
            return (
                waiting_html(g, r.present),
                empty_html(f"{count(g.guessed, 'guess', 'guesses')}: hidden until Reveal", 160),
                "",
            )
        return f'<p class="classround-verdict">{top1_line(g)}</p>', guesses_chart(g), guesses_table(g)
    settings = html.escape(settings_words(r.settings))
    note = f'<p class="classround-note">The round is at {settings}; greedy ignores that: it takes the argmax.</p>'
    return f'<p class="classround-verdict">{verdict(r.greedy)}</p>', steps_html(r.greedy), passes_html(r.greedy) + note


def _guess_task(r: RoundRecord, seat: SeatRecord) -> str:
    g = r.guesses
    if g.revealed:
        yours = (
            f"You guessed {html.escape(visible_token(seat.guess.text))} (the model's p = {seat.guess.p:.1%})."
            if seat.guess
            else "You did not guess at this step."
        )
        return f'<p class="classround-verdict">{top1_line(g)} {yours}</p>{guesses_chart(g, 200)}'
    chips = "".join(
        f'<button class="classround-choice{" picked" if seat.guess and seat.guess.id == t.id else ""}" '
        f'data-key="{r.step}:{t.id}">{html.escape(visible_token(t.text))}</button>'
        for t in seat.choices
    )
    yours = (
        f"Your guess: <b>{html.escape(visible_token(seat.guess.text))}</b> (you can change it until the reveal)."
        if seat.guess
        else "Which token comes next? Pick one of the model's ten likeliest (in alphabetical order), or type your own."
    )
    return f'<p class="classround-verdict">{yours}</p><div class="classround-choices">{chips}</div>'


def _sample_task(r: RoundRecord, seat: SeatRecord) -> str:
    settings = html.escape(settings_words(r.settings))
    if not seat.drawn:
        return (
            f'<p class="classround-verdict">Press <b>Draw</b>: one token drawn with your own seed from the model\'s '
            f"probabilities at {settings}, the class's draws counted together on the projector.</p>"
        )
    chips = "".join(
        f'<span class="classround-tok">{html.escape(visible_token(seat.texts[t]))}</span>' for t in seat.drawn[-40:]
    )
    more = f"the last 40 of {len(seat.drawn)}: " if len(seat.drawn) > 40 else ""
    return (
        f'<p class="classround-verdict">Your draws at {settings} ({more}your last was the class\'s draw '
        f'{seat.last_serial}):</p><div class="classround-drawn">{chips}</div>'
    )


def _greedy_task(r: RoundRecord, seat: SeatRecord) -> str:
    names = r.greedy.texts if r.greedy else {}
    chips = "".join(
        f'<span class="classround-tok">{html.escape(visible_token(names.get(t, "?")))}</span>' for t in seat.greedy
    )
    length = r.greedy.length if r.greedy else 0
    then = (
        "Done: the projector compares everyone's."
        if len(seat.greedy) >= length
        else "Press <b>Step greedy</b> for one more, or <b>Run greedy</b> for the rest; the projector compares "
        "everyone's."
    )
    return (
        f'<p class="classround-verdict">Your greedy run: {len(seat.greedy)} of {length} tokens. {then}</p>'
        f'<div class="classround-drawn">{chips}</div>'
    )


def _ended(r: RoundRecord) -> str:
    moved = f" The teacher started round {r.moved_to}: this page joins it." if r.moved_to else ""
    return f"Round {r.code} has ended ({r.ended}).{moved}"


def _parts(role: str, kind: str, slots: dict, attrs: dict | None = None) -> Parts:
    attrs = attrs or {}
    inner = {s: slots.get(s, "") for s in SLOTS}
    values = "".join(f' {name}="{html.escape(v)}"' for (_, name), v in attrs.items())
    body = "".join(f'<div class="{s[1:]}">{inner[s]}</div>' for s in SLOTS)
    whole = f'<div class="classround-view" data-role="{role}" data-kind="{kind}"{values}>{body}</div>'
    return Parts(whole, shape=(role, kind), slots=inner, attrs=attrs)


# the view's rules, and which controls each person sees (the root's data-role and data-kind, read by :has())
CSS = f"""
.classround-view {{ font-size: calc(16px * var(--lab-type, 1)); min-width: 0; }}
/* a chart's plot column may shrink below its labels' width (they clip): in a narrow column it stays inside it */
.classround-view .lc-grid {{ grid-template-columns: auto auto minmax(0, 1fr) auto; }}
/* on a phone a chart of ten bars and "others" is wider than the screen: it scrolls sideways inside its own box */
.classround-view .lc {{ max-width: 100%; overflow-x: auto; }}
.classround-view p {{ margin: 4px 0; }}
.classround-v-head {{ font-size: 1.1em; }}
.classround-code {{ font-size: 1.6em; letter-spacing: 0.08em; font-family: ui-monospace, monospace; }}
.classround-kind {{ font-weight: 700; }}
.classround-join {{ font-size: 0.85em; }}
.classround-link {{ overflow-wrap: anywhere; }}
.classround-context {{ font-family: ui-monospace, monospace; font-size: 0.95em; overflow-wrap: anywhere;
  border-left: 3px solid rgba(128,128,128,.4); padding-left: 8px; }}
.classround-tok {{ display: inline-block; margin: 1px 2px; padding: 0 4px; border-radius: 4px;
  border: 2px solid {KEPT}; font-family: ui-monospace, monospace; }}
.classround-tok.class {{ border-color: {CHOSEN}; }}
.classround-next {{ display: inline-block; margin-left: 3px; padding: 0 6px; border: 2px dashed rgba(128,128,128,.7);
  border-radius: 4px; }}
.classround-choices, .classround-drawn, .classround-cells {{ display: flex; flex-wrap: wrap; gap: 6px; margin: 6px 0; }}
.classround-choice {{ font-family: ui-monospace, monospace; font-size: 1.05em; padding: 6px 10px; min-width: 44px;
  border-radius: 6px; border: 2px solid {KEPT}; background: transparent; color: inherit; cursor: pointer; }}
.classround-choice.picked {{ background: {KEPT}; color: #fff; }}
.classround-cell {{ font-family: ui-monospace, monospace; padding: 0 4px; border-radius: 4px;
  border: 2px solid {KEPT}; }}
.classround-cell.split {{ border-color: {FORCED}; border-style: dashed; font-weight: 700; }}
.classround-cell.after {{ opacity: 0.6; }}
.classround-split {{ color: #8a1f5c; }}
.classround-agree {{ color: #00603f; }}
.classround-table {{ border-collapse: collapse; margin-top: 4px; }}
.classround-table :is(td, th) {{ padding: 1px 10px 1px 0; text-align: left; }}
.classround-note {{ font-size: 0.9em; }}
.classround-seats {{ display: inline; }}
.classround-seats summary {{ display: inline; cursor: pointer; text-decoration: underline dotted; }}
.classround-seat {{ font-family: ui-monospace, monospace; font-size: 0.85em; margin: 2px; padding: 2px 6px;
  border: 1px solid rgba(128,128,128,.6); border-radius: 4px; background: transparent; color: inherit;
  cursor: pointer; }}
.classround-locked {{ font-size: 0.85em; font-weight: 700; }}
.classround-lock {{ font-size: 0.8em; margin-left: 6px; padding: 2px 8px; border: 1px solid rgba(128,128,128,.6);
  border-radius: 4px; background: transparent; color: inherit; cursor: pointer; }}
#classround-page:has(.classround-view[data-greedy=done]) .classround-for-greedy {{ display: none !important; }}
#classround-page:has(.classround-view[data-role=student]) .classround-teacher {{ display: none !important; }}
#classround-page:has(.classround-view:not([data-role=student])) .classround-student {{ display: none !important; }}
#classround-page:has(.classround-view:not([data-role=visitor])) .classround-visitor {{ display: none !important; }}
#classround-page:has(.classround-view:not([data-role=teacher])) .classround-running {{ display: none !important; }}
"""
KIND_CSS = "\n".join(
    f"#classround-page:has(.classround-view:not([data-kind={kind}])) .classround-for-{kind} "
    "{ display: none !important; }"
    for kind in KIND_LABELS
)
