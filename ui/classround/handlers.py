"""The class round's handlers: each finds the page's round (by its seat, ui/classround/seats.py), calls the round
(decoding.classround), and answers with the page's one view (visuals.classround), patched: only what changed since
that page's last view. A teacher's change carries the key their page keeps (`teacher`: {code, key}); the round checks
it and a student's page is told it may not. A ValueError names what is wrong; `ui.events.teach` shows it.

Each handler takes the page's session (its gradio session hash) first, then the page's values, and returns a
NamedTuple named by the page's components (ui/classround/tab.py wires them by those names)."""

import contextlib
from typing import NamedTuple

import gradio as gr

from decoding import values
from decoding.classround.codes import normal_code
from decoding.classround.greedy import LENGTH
from decoding.classround.guesses import typed_token
from decoding.classround.records import CLASS, MODEL
from decoding.knobs import settings_from
from decoding.prompts import encode_prompt
from ui.alive import gone, page_restarted
from ui.classround import rounds
from ui.classround.presets import DEFAULT_KIND, DEFAULT_PRESET, PRESETS, link_setup
from ui.classround.seats import SEATS, Seat, student_of
from ui.context import AppConfig, get_model
from ui.events import error_html
from ui.patch import Patcher
from visuals.classround.view import KIND_LABELS, blank_parts, projector_parts, student_parts
from visuals.parts import Parts, changes

EACH = 100  # "Draw 100 each"
KINDS_BY_LABEL = {label: kind for kind, label in KIND_LABELS.items()}
OFF = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}  # the knobs as a round starts unless a link says
# what a page whose round is gone does next (ui/alive.py, `gone`, says why it is gone)
TEACHER_AGAIN = "press Start a round to begin a new one (or join one with its code)"
STUDENT_AGAIN = "open the round's link, or type its code and Join"
EITHER_AGAIN = "the teacher presses Start a round, and each student joins it with its new code"
# a lecture hall (rounds in a shared store): a page whose replica went away is served by another, and its round goes on
MOVED = (
    "this page's server went away and another of the hall's servers took the page over; the round goes on (the servers "
    "share it) and your seat is back, with what you drew and guessed: press again"
)


class Viewed(NamedTuple):
    view: object


class Started(NamedTuple):
    teacher: dict
    view: object


class Joined(NamedTuple):
    view: object
    code: object


class Picked(NamedTuple):
    prompt: str
    chat: bool


class Loaded(NamedTuple):
    preset: object
    prompt: object
    chat: object
    kind: object
    temperature: object
    top_k: object
    top_p: object
    min_p: object
    view: object
    code: object
    message: object


def preset_picked(name: str) -> Picked:
    p = PRESETS[values.choice("Preset", name, PRESETS)]
    return Picked(p.prompt, p.chat)


def start(config: AppConfig, session, teacher, prompt, chat, kind, temperature, top_k, top_p, min_p) -> Started:
    """A new round on the prompt (one forward pass); this page becomes its projector, and its key stays here."""
    lm = get_model(config)
    settings = settings_from(_knobs(temperature, top_k, top_p, min_p), vocab_size=lm.vocab_size)
    kind = KINDS_BY_LABEL[values.choice("Kind of round", kind, KINDS_BY_LABEL)]
    if chat and not lm.chat:
        raise ValueError(f"{lm.label} has no chat template: untick Chat template")
    r, kept = rounds.start(
        lm, encode_prompt(lm.tokenizer, prompt, bool(chat), lm.context_length), settings, kind, teacher
    )
    seat = SEATS.sit(session, Seat(r.code, None))
    return Started(kept, _send(seat, projector_parts(r.record())))


def join(session, code) -> Joined:
    """This page joins the round with `code` as a student (again: the same student)."""
    r = rounds.find(normal_code(code))
    student, seed = student_of(session)
    r.join(student, seed)
    seat = SEATS.sit(session, Seat(r.code, student, seed))
    return Joined(_send(seat, _parts(r, seat)), r.code)


def load(session, teacher, query: dict) -> Loaded:
    """A shared link, as the page loads: its preset, kind and knobs set the next round's controls; its round code
    joins that round (as its teacher, when this browser started it); a teacher's page reloaded shows its round again."""
    link = link_setup(query)
    if query.get("tab") != "classround":
        return Loaded(*[gr.skip()] * len(Loaded._fields))
    preset = PRESETS[link.preset or DEFAULT_PRESET]
    knobs = {**OFF, **link.knobs}
    setup = dict(preset=link.preset or DEFAULT_PRESET, prompt=preset.prompt, chat=preset.chat)
    setup |= dict(kind=KIND_LABELS[link.kind or DEFAULT_KIND], **knobs)
    own = teacher.get("code") if isinstance(teacher, dict) else None
    shown, message = dict(view=gr.skip(), code=gr.skip()), link.message
    plan = link.preset is not None or link.kind is not None  # a class plan's link: the next round's setup
    try:
        if own is not None and link.round in (None, own) and not plan and _resumed(session, teacher):
            seat = SEATS.get(session)
            shown = dict(view=_whole(seat), code=gr.skip())
        elif link.round is not None:
            shown = join(session, link.round)._asdict()
        elif own is not None and _running(teacher):
            # a plan opened while the teacher's last round runs: this page is set up for the next one, not showing it
            shown = dict(view=Patcher().send(blank_parts(_next_plan(own))), code=gr.skip())
    except ValueError as err:
        message = message + error_html(err)
    return Loaded(**setup, **shown, message=message)


def refresh(session, teacher=None, code=None) -> Viewed:
    """The page's view, if anything changed (else nothing is sent): pressed by the page's script when the round's
    number it asks (ui/classround/shown.py) changed. A student whose teacher started the next round follows them; a
    teacher's or a student's page that another of a hall's servers took over shows its round again (`teacher`: what a
    teacher's page keeps; `code`: the round a student's page shows)."""
    seat = SEATS.get(session) or (SEATS.get(session) if _resumed(session, teacher) or _moved(session, code) else None)
    if seat is None:  # the view shows a round the server holds no seat in for this page: said in the view, whole
        return Viewed(Patcher().send(blank_parts(_lost(EITHER_AGAIN, had=True))))
    try:
        r = rounds.find(seat.code)
        if seat.student is not None and r.seat(seat.student).removed:
            raise ValueError(f"the teacher removed this page from round {r.code}: ask the teacher")
        moved = r.ended is not None and r.moved_to and seat.student is not None
        return Viewed(join(session, r.moved_to).view if moved else _send(seat, _parts(r, seat)))
    except ValueError as err:  # the round is gone: said once in the view, and the page stops asking
        SEATS.leave(session)
        return Viewed(_send(seat, blank_parts(str(err))))


def resend(session) -> Viewed:
    """The whole view again, for a page that missed a change (ui/patch.py)."""
    seat = SEATS.get(session)
    return Viewed(gr.skip() if seat is None else _whole(seat))


def current(session):
    """The page's view as it should be now (its changes, or nothing): sent beside a message that says what was
    refused."""
    seat = SEATS.get(session)
    try:
        return gr.skip() if seat is None else _send(seat, _parts(rounds.find(seat.code), seat))
    except ValueError:
        return gr.skip()


def leave(session) -> None:
    """The page closed: a student is counted out of their round (what they drew stays counted)."""
    seat = SEATS.leave(session)
    if seat is not None and seat.student is not None:
        with contextlib.suppress(ValueError):  # the round is gone already
            rounds.find(seat.code).leave(seat.student)


# --- the teacher's buttons: each checks the key the page sent ---


def advance(session, teacher, how: str) -> Viewed:
    r, key = _teacher(session, teacher)
    r.advance(key, values.choice("Next token", how, (MODEL, CLASS)))
    return _viewed(session, r)


def reveal(session, teacher) -> Viewed:
    r, key = _teacher(session, teacher)
    r.reveal(key)
    return _viewed(session, r)


def draw_each(session, teacher) -> Viewed:
    r, key = _teacher(session, teacher)
    r.draw_each(key, EACH)
    return _viewed(session, r)


def lock(session, teacher) -> Viewed:
    """Lock the round to new students, or unlock it (the one button says which it will do)."""
    r, key = _teacher(session, teacher)
    r.lock_joining(key, not r.locked)
    return _viewed(session, r)


def remove(session, teacher, student) -> Viewed:
    """Remove a seat the projector lists (its id, put in a hidden box by the page's script)."""
    r, key = _teacher(session, teacher)
    r.remove(key, str(student or ""))
    return _viewed(session, r)


def end(session, teacher) -> Viewed:
    r, key = _teacher(session, teacher)
    r.end(key)
    rounds.keep(r)  # its caches freed: counted again, as none
    return _viewed(session, r)


def set_kind(session, teacher, kind) -> Viewed:
    """The teacher picked another kind: the round changes kind if there is one (else the next round starts so)."""
    if SEATS.get(session) is None:
        return Viewed(gr.skip())
    r, key = _teacher(session, teacher)
    r.set_kind(key, KINDS_BY_LABEL[values.choice("Kind of round", kind, KINDS_BY_LABEL)])
    return _viewed(session, r)


def set_settings(session, teacher, temperature, top_k, top_p, min_p) -> Viewed:
    """The teacher moved a knob: new settings start a new draw (if there is a round; else the next one starts so)."""
    if SEATS.get(session) is None:
        return Viewed(gr.skip())
    r, key = _teacher(session, teacher)
    knobs = _knobs(temperature, top_k, top_p, min_p)
    r.set_settings(key, settings_from(knobs, vocab_size=r.lm.vocab_size))
    return _viewed(session, r)


# --- a student's buttons ---


def pick(session, picked, code=None) -> Viewed:
    """A guess clicked among the ten: "step:token id", put in a hidden box by the page's script (the step the page
    showed, so a tap that crosses the teacher's Next is refused with why, not counted for the next step)."""
    r, seat = _student(session, code)
    step, _, token = str(picked or "").rpartition(":")
    step = values.whole("Guess (step)", step, 0, r.max_steps) if step else None
    r.guess(seat.student, values.whole("Guess (token id)", token, 0, r.lm.vocab_size - 1), step)
    return _viewed(session, r)


def typed(session, text, code=None) -> Viewed:
    """A guess typed: one token of the model's."""
    r, seat = _student(session, code)
    r.guess(seat.student, typed_token(r.lm.tokenizer, text))
    return _viewed(session, r)


def draw(session, code=None) -> Viewed:
    r, seat = _student(session, code)
    r.draw_one(seat.student)
    return _viewed(session, r)


def greedy(session, code=None, steps: int = 1) -> Viewed:
    """Greedy steps of the student's own run, through the shared scheduler (`steps`: 1, or LENGTH for the rest)."""
    r, seat = _student(session, code)
    held = len(r.held_tokens())
    r.greedy_step(seat.student, values.whole("Greedy steps", steps, 1, LENGTH))
    if len(r.held_tokens()) != held:  # a first step made the student's run: its cache counts under the server's cap
        rounds.keep(r)
    return _viewed(session, r)


def numbers(code: str, key: str) -> dict:
    """The round's counts and probabilities as JSON, with its teacher key alone (bench/classroom_load.py checks the
    projector against them): before the reveal they are the answer."""
    return rounds.find(normal_code(code)).numbers(key)


# --- inside ---


def _knobs(temperature, top_k, top_p, min_p) -> dict:
    return dict(temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p)


def _teacher(session, teacher):
    """The page's round and the key its page sent (None when it holds none for this round: a student's page)."""
    seat = SEATS.get(session) or (SEATS.get(session) if _resumed(session, teacher) else None)
    if seat is None:
        had = isinstance(teacher, dict) and teacher.get("code") is not None
        raise ValueError(gone("class round", TEACHER_AGAIN, had=had))
    r = rounds.find(seat.code)
    key = teacher.get("key") if isinstance(teacher, dict) and teacher.get("code") == r.code else None
    return r, key


def _student(session, code=None):
    """The page's round and seat (`code`: the round its page shows, which seats it again on another of a hall's
    servers: the click is refused once, saying so)."""
    seat = SEATS.get(session)
    if seat is None and _moved(session, code):
        raise ValueError(MOVED)
    if seat is None:
        raise ValueError(_lost(STUDENT_AGAIN, had=False))
    if seat.student is None:
        raise ValueError(f"this page started round {seat.code}: it is the round's projector, not a student's page")
    return rounds.find(seat.code), seat


def _moved(session, code) -> bool:
    """Whether this page was a student's on another of a hall's servers, now seated here again in its round `code`
    (the same student: their id and seed come from the page's session)."""
    if not (code and rounds.shared() and page_restarted()):
        return False
    join(session, code)
    return True


def _lost(again: str, had: bool) -> str:
    """Why this page has no seat here: in a lecture hall, a page another server took over (its round goes on), else
    `gone`'s one rule."""
    if rounds.shared() and page_restarted():
        return MOVED
    return gone("class round", again, had=had)


def _resumed(session, teacher) -> bool:
    """A reloaded teacher's page, or one another of a hall's servers took over: its round again, if it still runs and
    the key is its own."""
    if not isinstance(teacher, dict):
        return False
    try:
        r = rounds.find(teacher.get("code"))
        r.check(teacher.get("key"), "show")
    except ValueError:
        return False
    if r.ended is not None:
        return False
    SEATS.sit(session, Seat(r.code, None))
    return True


def _running(teacher) -> bool:
    """Whether the teacher's last round (what their page kept) still runs."""
    try:
        return rounds.find(teacher.get("code")).ended is None
    except ValueError:
        return False


def _next_plan(code: str) -> str:
    return (
        f"Your round {code} still runs. Press Start a round for this plan: {code} ends and its class follows you to "
        "the new round."
    )


def _parts(r, seat: Seat) -> Parts:
    record = r.record()
    if seat.student is None:
        return projector_parts(record)
    return student_parts(record, r.seat(seat.student), ping=seat.ping)


def _viewed(session, r) -> Viewed:
    return Viewed(_send(SEATS.get(session), _parts(r, SEATS.get(session))))


def _send(seat: Seat, parts: Parts):
    """The view's value for the page: its changes since the last sent, or nothing when there are none."""
    with seat.lock:
        if changes(seat.patcher.sent, parts) == []:
            return gr.skip()
        return seat.patcher.send(parts)


def _whole(seat: Seat):
    with seat.lock:
        if seat.patcher.sent is None:
            seat.patcher.sent = _parts(rounds.find(seat.code), seat)
        return seat.patcher.resend()
