"""The "Constrained decoding" tab: a grammar as one more mask, live. Layout (`layout`), and one line of wiring per
event (`wire`); handlers in ui/constrained/handlers.py."""

from dataclasses import dataclass

import gradio as gr

from decoding import values
from decoding.constrained.measure import MAX_SAMPLES
from decoding.constrained.presets import DEFAULT, PRESETS
from decoding.knobs import KNOBS, ORDER_LABEL
from decoding.pipeline import ORDERS
from decoding.stages import TEMPERATURE, TOP_K, TOP_P
from ui.constrained import handlers as h
from ui.constrained import measure as m
from ui.context import AppConfig, quoting_steps
from ui.events import PROGRESS, message_line, model_event, teach
from ui.group import Group, controls_from
from ui.lesson import lesson, try_this
from ui.links import picked_on_load
from ui.patch import patched
from ui.sessions import release_run
from ui.tabs import TabSpec
from ui.validate import knob, knob_slider, whole_number_box
from visuals.constrained.views import CSS
from visuals.glossary import term
from visuals.theme import empty_figure

LESSON = (
    "A grammar masks out every token that is not a legal next piece, so the model can only write answers that parse."
)
INTRO = f"""\
To get an answer a program can read (JSON, a date, *yes* or *no*), mask out every token that is not a legal next
piece of the grammar before sampling: the model can only pick among legal tokens, so the answer always parses.
The grammar (compiled by [llguidance](https://github.com/guidance-ai/llguidance) from a JSON schema, a regex, a list
of choices or a Lark grammar) is one more row beside top-k, top-p and min-p. Where only one continuation is legal,
the tokens are **forced**: nothing to sample, and no {term("forward pass")} of their own (*{term("fast-forward")}*)."""
TRY_THIS = """\
1. Preset **extract name and age as JSON**, press **Step**: `{"name":` arrives at once, forced by the grammar
   (dashed wine chips, no model call). Step on: the model only writes the name and the age.
2. Preset **answer yes or no**, press **Step**: the model's favourites, *No* and *Yes* with capitals, are removed by
   the grammar (wine bars); the grammar's row says how much probability the model had put on illegal tokens.
3. Preset **a date as YYYY-MM-DD**, under **More settings** set **top-k** to 1 and the **order** to *llama.cpp*,
   press **Step**: the chip has ↺. top-k 1 kept only the model's favourite, `Ap` (for *Apollo*), which is illegal;
   llama.cpp drew it, threw it away and redid the step with the grammar first (the *Chosen* line says so). Press
   **Back**, pick *transformers*, **Step**: the grammar runs before top-k, so top-k keeps the best legal digit and
   nothing is redrawn.
4. Type `x` in **Force a token** and press **Force**: refused, and the message names the legal tokens. Press
   **Back**: the forced tokens and the last sampled one go, and the grammar's state rolls back with them.
5. Set **top-k** back to 0, press **Sample 20 times**: the free answers rarely parse; the constrained ones always
   do, and the chart shows how much less likely the model found some of them. Below it, the mask's cost beside one
   forward pass.
"""
ORDER_HINT = "where the grammar runs: transformers and vLLM before the truncations, llama.cpp after (then resamples)"


@dataclass(frozen=True)
class Knobs(Group):
    """The sampler knobs' components, named as the SamplerSettings fields they set."""

    order: gr.Radio
    temperature: gr.Slider
    top_k: gr.Number
    top_p: gr.Slider


@dataclass(frozen=True)
class ConstrainedPage:
    run_id: gr.State
    preset: gr.Dropdown
    note: gr.Markdown
    prompt: gr.Textbox
    kind: gr.Radio
    text: gr.Code
    knobs: Knobs
    seed: gr.Number
    max_new: gr.Slider
    fast_forward: gr.Checkbox
    step: gr.Button
    end: gr.Button
    back: gr.Button
    reset: gr.Button
    token: gr.Textbox
    force: gr.Button
    message: gr.HTML  # a bad value, said in words naming its control
    view: h.View  # the run's outputs
    n: gr.Number
    measure: gr.Button
    cancel: gr.Button
    measured: m.Measured  # the measurement's outputs

    def controls(self, given: dict) -> h.Controls:
        """The run's controls, read from an event's inputs by component."""
        return controls_from(h.Controls, self, given)

    def shown(self, view: h.View) -> dict:
        """A handler's view as {component: value}: `view` holds the components, in the same NamedTuple type."""
        return dict(zip(self.view, view, strict=True))


def _controls() -> dict:
    """The left column: the preset, the prompt and the grammar, the lesson's knobs; then, in "More settings" (closed),
    the engine order, the samplers, the seed, the length and fast-forward."""
    first = PRESETS[DEFAULT]
    preset = gr.Dropdown(list(PRESETS), value=DEFAULT, label="Preset", elem_id="constrained-preset")
    note = gr.Markdown(f"*What to watch:* {first.watch}")
    prompt = gr.Textbox(first.prompt, label="Prompt (one chat turn)", lines=2, elem_id="constrained-prompt")
    kind = gr.Radio(list(h.KINDS), value=first.constraint.label, label="Constraint", elem_id="constrained-kind")
    text = gr.Code(first.constraint.text, label="Grammar", lines=6, elem_id="constrained-text")
    with gr.Accordion("More settings", open=False, elem_id="constrained-more"):
        with gr.Row():
            order = gr.Radio(
                list(ORDERS), value="transformers", label=ORDER_LABEL, info=ORDER_HINT, elem_id="constrained-order"
            )
        with gr.Row():
            temperature = knob(TEMPERATURE.field, TEMPERATURE.neutral, "0 = greedy")
            top_k = whole_number_box(
                TOP_K.neutral, label=KNOBS[TOP_K.field].label, info="0 = off", elem_id="constrained-topk"
            )
            top_p = knob(TOP_P.field, TOP_P.neutral, "1 = off")
        with gr.Row():  # the slider takes two shares: in three equal ones its maximum was cut off at the column's edge
            seed = whole_number_box(0, label="Seed", elem_id="constrained-seed", scale=1)
            max_new = knob_slider(
                1,
                h.MAX_NEW_UI,
                first.max_new_tokens,
                step=1,
                label="Max new tokens",
                scale=2,
                elem_id="constrained-max-new",
            )
        fast_forward = gr.Checkbox(True, label="Fast-forward forced tokens", elem_id="constrained-ff")
    knobs = Knobs(order=order, temperature=temperature, top_k=top_k, top_p=top_p)
    return dict(
        preset=preset,
        note=note,
        prompt=prompt,
        kind=kind,
        text=text,
        knobs=knobs,
        seed=seed,
        max_new=max_new,
        fast_forward=fast_forward,
    )


def _run_panel() -> tuple[dict, gr.HTML]:
    """The right column: the buttons and the message line; and the run's outputs drawn there."""
    with gr.Row(elem_id="constrained-buttons"):
        buttons = dict(
            step=gr.Button("Step", variant="primary", elem_id="constrained-step"),
            end=gr.Button("Run to end", elem_id="constrained-end"),
            back=gr.Button("Back", elem_id="constrained-back"),
            reset=gr.Button("Reset", elem_id="constrained-reset"),
        )
    message = message_line("constrained-message")
    # the step: its words, the answer's chips, the chart and the mask rows, one element a Step patches
    shown = patched(h.blank().shown, elem_id="constrained-view")
    # under the chart, so that Step and the chart share the screen (1280x720)
    with gr.Row():
        token = gr.Textbox(
            label="Force a token", placeholder="one token, e.g. yes", scale=3, elem_id="constrained-token"
        )
        force = gr.Button("Force", scale=1, elem_id="constrained-force")
    return dict(**buttons, token=token, force=force, message=message), shown


def layout(config: AppConfig) -> ConstrainedPage:
    lesson(
        LESSON,
        "Constrained decoding: a grammar as one more mask",
        first="**Start here:** press **Step**: the chart shows the bars the grammar removes.",
    )
    run_id = gr.State(None, delete_callback=release_run)
    with gr.Row():
        with gr.Column(scale=2, min_width=320):
            # in the controls' column (as the step tab): opening them never pushes the chart down
            with gr.Accordion("How the grammar's mask works", open=False, elem_id="constrained-how"):
                gr.Markdown(INTRO)
            try_this(quoting_steps(TRY_THIS, config), 5, "constrained-try")
            controls = _controls()
        with gr.Column(scale=3, min_width=560):
            buttons, shown = _run_panel()
    view = h.View(run_id=run_id, shown=shown, orders=gr.HTML(elem_id="constrained-orders"))
    gr.Markdown("### The same prompt, N times, without and with the constraint")
    with gr.Row():
        # a box, not a slider: a slider's own box puts a typed 999 back to 50 without a word
        seeds = f"1 to {MAX_SAMPLES}; seeds seed .. seed + N - 1"
        n = whole_number_box(20, label="Samples", info=seeds, scale=3, elem_id="constrained-samples")
        measure = gr.Button("Sample 20 times", variant="primary", scale=1, elem_id="constrained-measure")
        cancel = gr.Button("Cancel", scale=1)
    measured = m.Measured(
        plot=gr.Plot(empty_figure(m.MEASURE_BLANK, 300), show_label=False, elem_id="constrained-measure-plot"),
        text=gr.Markdown(elem_id="constrained-measure-md"),
    )
    return ConstrainedPage(
        run_id=run_id, **controls, **buttons, view=view, n=n, measure=measure, cancel=cancel, measured=measured
    )


def apply_preset(c: ConstrainedPage, name) -> dict:
    """The preset's prompt, grammar and length into their controls; an unknown name changes nothing."""
    if name not in PRESETS:
        return {}
    p = PRESETS[name]
    return {
        c.prompt: p.prompt,
        c.kind: p.constraint.label,
        c.text: p.constraint.text,
        c.max_new: p.max_new_tokens,
        c.note: f"*What to watch:* {p.watch}",
    }


def measure_label(n):
    """The measure button says how many samples it takes; a value the check will refuse leaves it as it is."""
    try:
        return f"Sample {values.whole('samples', n, 1, MAX_SAMPLES)} times"
    except ValueError:
        return gr.skip()


def wire(c: ConstrainedPage, config: AppConfig) -> None:
    def step(given):
        return c.shown(h.step(config, given[c.run_id], c.controls(given)))

    def run_to_end(given, progress=PROGRESS):
        return c.shown(h.run_to_end(config, given[c.run_id], c.controls(given), progress=progress))

    def force(given):
        return c.shown(h.force(config, given[c.run_id], c.controls(given), given[c.token]))

    def back(given):
        return c.shown(h.back(given[c.run_id], c.controls(given)))

    def reset(run_id):
        return c.shown(h.reset(run_id))

    def orders_now(given):
        return {c.view.orders: h.orders_now(config, given[c.run_id], c.controls(given))}

    def measure(given, request: gr.Request = None, progress=PROGRESS):
        measured = m.measure(config, c.controls(given), given[c.n], request=request, progress=progress)
        return dict(zip(c.measured, measured, strict=True))

    inputs = {c.run_id, c.prompt, c.kind, c.text, c.seed, c.max_new, c.fast_forward, *c.knobs.components()}
    outputs = list(c.view)
    # each click's progress on the step's view alone: a status drawn on every output cost the page on each click
    minimal = dict(message=c.message, show_progress="minimal", show_progress_on=c.view.shown)
    preset_outputs = [c.prompt, c.kind, c.text, c.max_new, c.note]
    c.preset.change(lambda name: apply_preset(c, name), c.preset, preset_outputs).then(
        teach(reset, c.message), c.run_id, [*outputs, c.message], show_progress="hidden"
    )
    c.n.change(measure_label, c.n, c.measure, show_progress="hidden")
    model_event(c.step.click, step, inputs, outputs, **minimal)
    model_event(c.end.click, run_to_end, inputs, outputs, message=c.message, show_progress_on=c.view.shown)
    model_event(c.force.click, force, {*inputs, c.token}, outputs, **minimal)
    model_event(c.back.click, back, inputs, outputs, **minimal)
    c.reset.click(teach(reset, c.message), c.run_id, [*outputs, c.message], show_progress="hidden")
    model_event(c.measure.click, measure, {*inputs, c.n}, list(c.measured), message=c.message)
    m.CANCEL.wire(c.cancel)
    # the engine table follows the knobs at once: it reads the kept logits of the next token, no forward pass
    knob_changes = [k.change for k in c.knobs.components()]
    gr.on(knob_changes, teach(orders_now, c.message), inputs, [c.view.orders, c.message], show_progress="hidden")
    # the step's view, when the page missed a change (ui/patch.py)
    c.view.shown.input(h.whole, c.run_id, c.view.shown, show_progress="hidden", concurrency_limit=None)


def build(config: AppConfig):
    """The tab; returns the function app.py calls with the page, to pick a shared link's preset as it loads."""
    c = layout(config)
    wire(c, config)
    return picked_on_load("constrained", c.preset, c.message, PRESETS)


SPEC = TabSpec(
    "Constrained decoding",
    "constrained",
    80,
    build,
    main="#constrained-step",
    chart="#constrained-chart",
    try_this="#constrained-try",
    buttons="#constrained-buttons",
    css=CSS,
    presets=tuple(PRESETS),
    summary=(
        "a grammar (JSON schema, regex, choice, Lark) is one more mask, so every answer parses; where each engine "
        "puts it; validity, likelihood and the mask's cost, measured."
    ),
)
