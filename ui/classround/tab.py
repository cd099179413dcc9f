"""Sample together: a class round, the teacher's projector and every student's page in one tab. The page is built in
ui/classround/page.py; `wire` connects it, one line per event. Every event answers with the page's one patched view
(and its message line); its inputs are what the click needs and no more: a student's buttons send the round's code
their page shows (the server finds their seat by their session; a hall's other server, which took the page over, seats
them again by the code), a teacher's send the key their page keeps."""

from functools import partial
from typing import NamedTuple

import gradio as gr

from decoding.classround.greedy import LENGTH
from decoding.classround.records import CLASS, MODEL
from ui.classround import handlers as h
from ui.classround import rounds, shown
from ui.classround.page import CSS, ClassroundPage, layout
from ui.classround.presets import PRESETS
from ui.context import AppConfig
from ui.events import FOLLOWS, error_html, model_event, teach
from ui.links import query_of
from ui.opened import FirstOpen
from ui.tabs import TabSpec
from visuals.classround.view import CSS as VIEW_CSS
from visuals.classround.view import KIND_CSS

QUIET = {"show_progress": "hidden", "concurrency_limit": None}  # events that never run the model
FOLLOWING = {**QUIET, **FOLLOWS}  # and follow a control's value


def build(config: AppConfig):
    """The tab; returns the function app.py calls with the page: a shared link's round joined as the page loads, and
    a closed page counted out of its round. Where its rounds live is chosen here, once (ui/classround/rounds.py)."""
    rounds.serve(config)
    return wire(layout(), config)


def session_of(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "default"


def named(c: ClassroundPage, fn, out: type[NamedTuple], inputs=(), message=True):
    """(handler, inputs, outputs) for gradio: `fn(session, *inputs' values)` returns a NamedTuple like `out`, whose
    field names are the page's components. With `message`, a ValueError is said on the message line (as
    ui.events.teach says it) and the view is brought up to date with it: a student who presses Draw just after the
    teacher changed the round's kind is told so, and sees the new kind's buttons at once."""

    def handler(request: gr.Request, *given):
        session = session_of(request)
        try:
            answer = {getattr(c, name): value for name, value in fn(session, *given)._asdict().items()}
        except ValueError as err:
            if not message:
                raise
            return {c.message: error_html(err), **({c.view: h.current(session)} if "view" in out._fields else {})}
        return {**answer, c.message: ""} if message else answer

    outputs = [getattr(c, name) for name in out._fields]
    return handler, list(inputs), [*outputs, c.message] if message else outputs


def wire(c: ClassroundPage, config: AppConfig):
    view = dict(show_progress="minimal", show_progress_on=c.view)  # a status on the view alone: one output's cost
    teacher = [c.teacher]
    c.preset.input(*named(c, lambda _, name: h.preset_picked(name), h.Picked, [c.preset]), **FOLLOWING)
    setup = [c.teacher, c.prompt, c.chat, c.kind, *c.knobs()]
    model_event(c.start.click, *named(c, partial(h.start, config), h.Started, setup), api_name="start", **view)
    model_event(
        c.model_pick.click, *named(c, partial(h.advance, how=MODEL), h.Viewed, teacher), api_name="advance", **view
    )
    model_event(
        c.class_pick.click,
        *named(c, partial(h.advance, how=CLASS), h.Viewed, teacher),
        api_name="advance_class",
        **view,
    )
    c.reveal.click(*named(c, h.reveal, h.Viewed, teacher), api_name="reveal", **QUIET)
    c.draw_each.click(*named(c, h.draw_each, h.Viewed, teacher), api_name="draw_each", **QUIET)
    c.end.click(*named(c, h.end, h.Viewed, teacher), api_name="end", **QUIET)
    c.lock.click(*named(c, h.lock, h.Viewed, teacher), api_name="lock", **QUIET)
    c.remove.click(*named(c, h.remove, h.Viewed, [c.teacher, c.seat]), api_name="remove", **QUIET)
    c.kind.input(*named(c, h.set_kind, h.Viewed, [c.teacher, c.kind]), api_name="kind", **FOLLOWING)
    moves = [knob.release for knob in c.knobs()]
    gr.on(moves, *named(c, h.set_settings, h.Viewed, [c.teacher, *c.knobs()]), api_name="settings", **FOLLOWING)
    gr.on([c.join.click, c.code.submit], *named(c, h.join, h.Joined, [c.code]), api_name="join", **QUIET)
    # a student's buttons send the round's code their page shows, which a hall's other server seats them again by
    c.draw.click(*named(c, h.draw, h.Viewed, [c.code]), api_name="draw", **QUIET)
    guessed = [c.guess_btn.click, c.guess.submit]
    gr.on(guessed, *named(c, h.typed, h.Viewed, [c.guess, c.code]), api_name="guess", **QUIET)
    c.pick_btn.click(*named(c, h.pick, h.Viewed, [c.pick, c.code]), api_name="pick", **QUIET)
    greedy = dict(api_name="greedy", **view)
    model_event(c.step_greedy.click, *named(c, partial(h.greedy, steps=1), h.Viewed, [c.code]), **greedy)
    model_event(c.run_greedy.click, *named(c, partial(h.greedy, steps=LENGTH), h.Viewed, [c.code]), **view)
    # a page told by its script that its round changed, and a patched view that missed a change: the view alone
    c.refresh.click(*named(c, h.refresh, h.Viewed, [c.teacher, c.code], message=False), api_name="refresh", **QUIET)
    c.view.input(*named(c, h.resend, h.Viewed, message=False), api_name="resend", **QUIET)
    # the round's numbers, for its teacher key alone: before the reveal they are the answer
    gr.api(teach(h.numbers), api_name="round_numbers", concurrency_limit=None)
    return partial(on_page, c)


def on_page(c: ClassroundPage, demo: gr.Blocks, opened: FirstOpen) -> None:
    """A shared link's setup and round, as the tab first opens (ui/opened.py); a page that closes leaves its round."""
    loaded = [getattr(c, name) for name in h.Loaded._fields]

    def load(request: gr.Request, teacher):
        out = h.load(session_of(request), teacher, query_of(request))
        return {getattr(c, name): value for name, value in out._asdict().items()}

    def left(request: gr.Request):
        h.leave(session_of(request))

    c.teacher.render()  # at the page's top level (ui/classround/page.py says why)
    opened.click(load, [c.teacher], loaded, **QUIET)
    demo.unload(left)


SPEC = TabSpec(
    "Sample together",
    "classround",
    25,
    build,
    main="#classround-start",
    chart="#classround-view",
    try_this="#classround-try",
    buttons="#classround-buttons",
    css=CSS + VIEW_CSS + KIND_CSS,
    presets=tuple(PRESETS),
    routes=shown.routes,  # what its pages ask every fraction of a second or few seconds, outside gradio's queue
    summary=(
        "the class guesses the next word, or samples it together, from phones, and the projector counts every draw "
        "and guess."
    ),
)
