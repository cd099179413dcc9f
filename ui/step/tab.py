"""Step by step: watch the model choose one token at a time, change a knob between steps, force a token,
go back and branch. The page is built in ui/step/page.py, its parts named; `wire` connects them, one line per
event and one event per click; the handlers are in ui/step/handlers.py, what they draw in ui/step/view.py."""

import inspect
from functools import partial

import gradio as gr

from ui.context import AppConfig
from ui.events import FOLLOWS, model_event, stale_while_running, teach
from ui.opened import FirstOpen
from ui.step import handlers as h
from ui.step import keys, lens, lessons, links, page_state, reading
from ui.step.controls import Knobs
from ui.step.page import STYLE, StepPage, layout
from ui.tabs import TabSpec, on_its_page

# while a Prefill reads its prompt (the stage's full status shows), the old run's chart, panels and message are dimmed,
# and the status says what the server is doing
STALE = stale_while_running("#step-stage", "#step-stage .patched", "#step-message", "#step-below", "#step-strategies")
STALE += """#step-stage [data-testid=status-tracker].full:not(.hide)::before {
  content: "reading the prompt…"; font-size: var(--text-lg); font-weight: 600; margin-bottom: 4px; }
#step-stage [data-testid=status-tracker].full[data-reading]:not(.hide)::before { content: attr(data-reading); }"""


def build(config: AppConfig):
    """The tab; returns the function app.py calls with the page, to open a shared link's setup on load. The page
    starts with what that setup sets for a page with no link, so only a link's page runs it."""
    return wire(layout(config, links.open_link(config, None)), config)


SPEC = TabSpec(
    "Step by step",
    "step",
    10,
    build,
    main="#step-prefill",
    chart="#step-dist",
    try_this="#step-try",
    presets=tuple(lessons.PRESETS),
    css=STALE,
    summary=(
        "prefill, then one forward pass per token: the distribution at every step, each sampler's mask, penalties, "
        "forcing a token, going back, why it stopped, and what each layer would have said (the logit lens)."
    ),
    # the page's keys, clicks and style sheet: in the app's cached head, not in the page's config
    head=on_its_page("step", keys.JS + reading.JS, STYLE),
    routes=reading.routes,  # how far a Prefill has read its prompt, asked while the page waits
)


def named(fn, outputs, **args):
    """`fn` wired by name, as (handler, inputs, outputs) for gradio. The inputs are `args`' components in order (a
    `Knobs` stands for its eight knobs, which reach `fn` as one mapping by field); `fn` gets them by keyword. When
    `outputs` is a NamedTuple of components, `fn` returns a NamedTuple of values like it (or {}: nothing changes), and
    gradio gets {component: value}."""
    inputs = [x for a in args.values() for x in (a if isinstance(a, Knobs) else [a])]
    by_component = isinstance(outputs, tuple)

    def kwargs(given: tuple) -> dict:
        values = dict(zip(inputs, given))
        return {name: a.read(values) if isinstance(a, Knobs) else values[a] for name, a in args.items()}

    def keyed(out):
        return (dict(zip(outputs, out)) if out else {}) if by_component else out

    if inspect.isgeneratorfunction(fn):

        def handler(*given):
            for out in fn(**kwargs(given)):
                yield keyed(out)

    elif "request" in inspect.signature(fn).parameters:  # gradio hands a handler its request by this annotation

        def handler(request: gr.Request, *given):
            return keyed(fn(**kwargs(given), request=request))

    else:

        def handler(*given):
            return keyed(fn(**kwargs(given)))

    handler.__name__ = getattr(fn, "__name__", None) or fn.func.__name__  # the event's API name, as before
    return handler, inputs, list(outputs) if by_component else outputs


def wire(c: StepPage, config: AppConfig):
    """One line per event, one event per click: each answer holds everything the click changed, in the four elements
    of ui/step/view.py, and reads the page's state from one box (ui/step/page_state.py). Returns the function app.py
    calls with the page, to open a shared link's setup on load."""
    b, knobs = c.buttons, c.knobs
    page = dict(page=c.page)
    live = dict(run_id=c.run_id, **page)

    def on_step(triggers, fn, show_progress="minimal", **options):  # fn from `named`: runs the model, a bad value
        # to the message line; the click's progress on the stage alone: a status drawn on each of the answer's
        # elements cost the page ~100 ms a Step (bench/browser_cost.py)
        progress = dict(show_progress=show_progress, show_progress_on=c.stage)
        # a click answered at once skips gradio's queue (ui/events.py); Run n and Run to end stream their views
        direct = not inspect.isgeneratorfunction(fn[0])
        return model_event(triggers, *fn, message=c.message, direct=direct, **progress, **options)

    def saying(fn, outputs, **args):  # off the model's queue: an answer to the page, a bad value to the message line
        handler, inputs, outs = named(fn, outputs, **args)
        return teach(handler, c.message), inputs, [*outs, c.message]

    _wire_prompt(c, config)
    # the knobs, as they move (or a preset or a link sets them), written into the page's box by the page alone
    gr.on([knob.change for knob in knobs], None, list(knobs), c.page, js=page_state.WRITE_JS, show_progress="hidden")
    start = dict(model_id=c.model, message=c.prompt, template=c.template, seed=c.seed, max_new=c.max_new, stops=c.stops)
    # the page's visible inputs keep their order (the API's, bench/classroom_load.py's)
    prefill = named(partial(h.prefill, config), c.started, run_id=c.run_id, **start, **page, alone=c.alone, path=c.path)
    # a full status over the stage: a long prompt's Prefill takes seconds, and the old run's chart, panels and
    # message are marked as the run before it meanwhile (STALE)
    on_step(b.prefill.click, prefill, show_progress="full", api_name="prefill")
    c.alone.change(teach(h.set_alone), [c.run_id, c.alone], None, show_progress="hidden")
    on_step(b.step.click, named(h.step, c.answer, **live), api_name="step")
    on_step(b.back.click, named(h.back, c.answer, **live))
    # a bar clicked, or a candidate picked and Force pressed: the page's script puts its id in the box
    on_step(c.click.click, named(h.force, c.answer, run_id=c.run_id, force_id=c.click_box, **page))
    on_step(b.run_n.click, named(h.run_steps, c.answer, run_id=c.run_id, n=b.n_steps, **page))
    on_step(b.run_end.click, named(h.run_to_end, c.answer, **live))
    # Stop ends a long Prefill between two of its chunks, or a run after its step in flight, and says so after the
    # run's last view (ui.running); off the model's queue, or it would wait behind what it stops
    b.stop.click(*named(h.halted, c.answer, **live), **h.QUIET)
    c.redraw.click(*saying(h.stopped, c.answer, **live), **h.QUIET)  # "Bars show" changed: the same run, redrawn
    b.reset.click(*saying(h.reset, c.started, run_id=c.run_id))
    moves = [knob.release for knob in knobs.sliders()] + [knobs.order.change]
    on_step(moves, named(h.settings_changed, c.answer, **live, knobs=knobs), **FOLLOWS)
    gr.on(moves, *named(h.settings_note, c.why, knobs=knobs), **h.QUIET, **FOLLOWS)
    _wire_lens(c, live, on_step)
    _wire_strategies(c)
    # a patched element that missed a change asks for its whole view (ui/patch.py)
    for part, element in (("stage", c.stage), ("below", c.below)):
        element.input(partial(h.whole, part=part), c.run_id, element, **h.QUIET)
    c.save.click(teach(h.save_trace), c.run_id, c.files)
    c.upload.upload(*saying(h.load_trace, c.started, run_id=c.run_id, file=c.upload, **page))
    # the settings a link carries, in the order COPY_JS takes them
    shared = [c.preset, *[getattr(knobs, field) for field in links.PARAMS.values()], c.seed]
    c.copy.click(None, shared, c.link, js=links.COPY_JS)
    return partial(load_on_page, c, config)


def _wire_prompt(c: StepPage, config: AppConfig) -> None:
    """What the model will read, redrawn as the prompt, template or model changes; a picked preset sets it all."""
    read = partial(h.prompt_view, config)
    read_fn, read_inputs, read_outputs = named(read, c.reads, model_id=c.model, message=c.prompt, template=c.template)
    prompt_moves = [c.model.change, c.prompt.blur, c.template.change]
    model_event(prompt_moves, read_fn, read_inputs, read_outputs, show_progress="minimal", api_name="prompt_view")
    # a preset applies when the learner picks one (not when a shared link sets it with its own settings)
    picked = c.preset.input(*named(partial(h.apply_preset, config), c.setup, name=c.preset), **FOLLOWS)
    picked.then(teach(read_fn), read_inputs, read_outputs, **h.QUIET)
    picked.then(*named(h.settings_note, c.why, knobs=c.knobs), **h.QUIET)


def _wire_lens(c: StepPage, live: dict, on_step) -> None:
    """The lens panel (the page's script keeps its open state in the page's box, ui/step/keys.py): opening it reads
    the chart's lens (one pass, in the model's queue) and draws it in that one answer; from then on each click's
    answer draws it; closing stops the passes."""
    on_step(c.lens.accordion.expand, named(h.lens_opened, c.answer, **live))
    c.lens.accordion.collapse(teach(lens.closed), c.run_id, None, **h.QUIET)


def _wire_strategies(c: StepPage) -> None:
    """ "Same logits, each strategy alone": in each click's answer while open and on screen; drawn as it opens, and
    when it comes on screen showing an older distribution than the chart (the page's script presses `draw`)."""
    draw = named(h.strategies_drawn, c.strategies, run_id=c.run_id, page=c.page)
    model_event([c.strategies_panel.expand, c.strategies_draw.click], *draw, show_progress="hidden", direct=True)


def setup_outputs(c: StepPage) -> list:
    """What a link's setup sets, in the order of `links.Opened.values()`."""
    return [c.preset, *c.setup, c.seed, c.message, c.why, *c.reads]


def load_on_page(c: StepPage, config: AppConfig, demo: gr.Blocks, opened: FirstOpen) -> None:
    """A shared link's setup and what the model reads, set as the tab first opens on a link's page (a page with no
    link starts with the default preset's: `build`)."""

    def load_link(request: gr.Request):
        return links.open_link(config, request).values()

    opened.click(load_link, None, setup_outputs(c), link_only=True, **h.QUIET)
    # the page's box, from the knobs as the page opens (a link's values follow as they change them)
    demo.load(None, list(c.knobs), c.page, js=page_state.WRITE_JS)
