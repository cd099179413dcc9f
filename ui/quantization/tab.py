"""The "Quantization" tab: float32 and a rounded copy of the same model decode the same prompt greedily, side by side;
then each format's bytes and time measured on this device, and its quality on a held-out text. Layout and wiring;
handlers in ui/quantization/handlers.py (the step) and ui/quantization/measure.py (speed and quality)."""

from dataclasses import dataclass

import gradio as gr

from decoding import values
from decoding.models import BUNDLED, bundled_gguf_path
from decoding.quantization.formats import BOTH, PARTS
from decoding.quantization.stored import read_stored
from ui.context import CHAT, RAW, AppConfig, quoting_steps
from ui.events import message_line, model_event, teach
from ui.group import controls_from
from ui.lesson import lesson, style, try_this
from ui.patch import patched
from ui.quantization import handlers as h
from ui.quantization import kernels as k
from ui.quantization import measure as m
from ui.running import END
from ui.tabs import TabSpec
from ui.validate import whole_number_box
from visuals.glossary import term
from visuals.quantization import stored as files
from visuals.quantization.side_by_side import CSS

LESSON = (
    "Rounding a model's weights to fewer bits changes its next token only where it rounds what matters: which "
    "tensors you round counts more than the bit width."
)
INTRO = f"""\
First what the model file holds, read from it. Then float32 (that file, dequantized) and a copy in another format
decode one prompt greedily, side by side. Per step, llama.cpp's `--kl-divergence` metrics
([{term("perplexity")} tool](https://github.com/ggml-org/llama.cpp/tree/master/tools/perplexity)):
**{term("KL")}**(float32 ‖ format) in {term("nats")}, **Δp** of float32's token and **same {term("top-1")}**, on
float32's text."""
TRY_THIS = f"""\
1. Format **as stored**, press **Run {h.RUN_N}**: the file's own formats ({term("Q4_1")} layers, a {term("Q8_0")}
   {term("LM head")}) hold exactly the weights float32 runs: KL 0 and the same top-1 at every step, from 97 MB
   instead of 538.
2. Format **int4**, **Step**: at step 1 float32's top two tokens are less than a {term("points", "point")} apart,
   and int4 swaps them: the first greedy divergence is outlined on both streams.
3. Keep **int4**, set **Rounded** to **layers only**, **Run {h.RUN_N}**: KL 0 at every step. The layers are
   already int4 in {term("group", "groups")} of 32, so rounding them again changes no weight. Now **head only**:
   int4's drift is back, all of it. The LM head, stored at 8.5 bits a weight, is the one tensor 4 bits hurt.
   **int4, head kept** is the format that follows: llama.cpp's {term("Q4_K_M")} too keeps some tensors at more bits.
4. Format **int8-activations**, **Rounded** layers and head, **Run {h.RUN_N}**: the activations are rounded too,
   one scale for a whole tensor, and the top token changes at about half the steps (vermillion bars): a few huge
   hidden features ({term("outliers", "LLM.int8()'s outliers")}) set the scale and round the small ones to nothing.
5. Under **Quality on the held-out text**, press **Score**: KL and top-1 per format and per part over a text no
   model has seen. int4 on the layers only agrees at every position; int8 {term("per-channel")} on the layers does
   not: 8 bits on another grid than the file's 4 move weights that 4 bits held exactly.
6. Press **Measure**, then **Time the kernels**: on this CPU no weight-only kernel streams its int8 or int4 bytes
   faster than float32 streams its own, so those formats run {term("simulated")}, at float32's speed.
"""


def file_panel(config: AppConfig) -> str:
    """What the model file holds, read from the file; for another model, what the reference weights are."""
    if config.model_id != BUNDLED:
        return files.reference_html(config.model_id)
    return files.stored_html(read_stored(bundled_gguf_path()))


@dataclass(frozen=True)
class QuantPage:
    sid: gr.State
    prompt: gr.Textbox
    template: gr.Radio
    fmt: gr.Dropdown
    part: gr.Radio
    steps: gr.Number
    step: gr.Button
    run: gr.Button
    back: gr.Button
    reset: gr.Button
    message: gr.HTML
    view: h.View  # the step's outputs
    measure: m.MeasurePage  # speed and quality
    kernels: k.KernelsPage  # why a format runs simulated here

    def controls(self, given: dict) -> h.Controls:
        """The run's controls, read from an event's inputs by component."""
        return controls_from(h.Controls, self, given)

    def shown(self, view: h.View | None) -> dict:
        """A handler's view as {component: value}; for a run's `END`, none (each keeps what it shows)."""
        return {} if view is END else dict(zip(self.view, view, strict=True))


def layout(config: AppConfig) -> QuantPage:
    """One screen at 1280x720: the controls on the left, the buttons, both streams and both charts on the right;
    what the file holds and the measurements below."""
    style(CSS + files.CSS, "quantization-css")
    lesson(
        LESSON,
        "Quantization: which tensors you round matters more than the bit width",
        first="**Start here:** press **Step**: float32 and the rounded format pick the next token side by side.",
    )
    with gr.Accordion("How float32 and a rounded copy are compared", open=False, elem_id="quantization-how"):
        gr.Markdown(INTRO)
    blank = h.blank()
    with gr.Row():
        with gr.Column(scale=1, min_width=300):
            prompt = gr.Textbox(
                "Write a short poem about the sea.", label="Prompt", lines=2, elem_id="quantization-prompt"
            )
            # the lesson's two knobs: the format and what it rounds; the prompt's format and Run's length wait below
            fmt = gr.Dropdown(
                h.choices(config.model_id), value=h.DEFAULT_FORMAT, label="Format", elem_id="quantization-format"
            )
            part = gr.Radio(list(PARTS), value=BOTH, label="Rounded", elem_id="quantization-part")
            with gr.Accordion("More settings", open=False, elem_id="quantization-more"):
                template = gr.Radio([RAW, CHAT], value=CHAT, label="Prompt format", elem_id="quantization-template")
                steps = whole_number_box(h.RUN_N, label=h.STEPS_LABEL, elem_id="quantization-steps")
            # under the controls: opened, it pushes nothing a teacher needs below the fold
            # every format here is rounded from float32's weights and compared with them, whatever --weights is
            try_this(quoting_steps(TRY_THIS, h.reference_config(config)), 6, "quantization-try")
        with gr.Column(scale=3, min_width=560):
            with gr.Row(elem_id="quantization-buttons"):
                step = gr.Button("Step", variant="primary", elem_id="quantization-step")
                run = gr.Button(run_label(h.RUN_N), elem_id="quantization-run")
                back = gr.Button("Back", elem_id="quantization-back")
                reset = gr.Button("Reset", elem_id="quantization-reset")
            message = message_line("quantization-message")
            # the step's words, both distributions beside KL per step, and under them the two streams (which grow
            # with every step while the charts stay where they are): one element, patched by each step
            shown = patched(blank.shown, elem_id="quantization-view")
    # what the file holds, under the side by side: above it, in projector mode's larger type its table pushed Step
    # below a 720-pixel screen
    gr.HTML(file_panel(config), elem_id="quantization-file")
    sid = gr.State(None, delete_callback=h.release)
    view = h.View(sid=sid, shown=shown)
    return QuantPage(
        sid=sid,
        prompt=prompt,
        template=template,
        fmt=fmt,
        part=part,
        steps=steps,
        step=step,
        run=run,
        back=back,
        reset=reset,
        message=message,
        view=view,
        measure=m.layout(config.model_id),
        kernels=k.layout(),
    )


def run_label(steps) -> str:
    """The Run button says how many steps it takes: the box's number, when it is one Run accepts."""
    try:
        return f"Run {values.whole(h.STEPS_LABEL, steps, 1, h.MAX_NEW)}"
    except ValueError:
        return "Run"


def wire(c: QuantPage, config: AppConfig) -> None:
    # both yield their views as ui.running says: a Format change or Reset reaches the page after them
    def step(given):
        for view in h.step(config, given[c.sid], c.controls(given)):
            yield c.shown(view)

    def run(given):
        for view in h.run_n(config, given[c.sid], c.controls(given)):
            yield c.shown(view)

    def back(sid):
        return c.shown(h.back(sid))

    def reset(sid):
        return c.shown(h.reset(sid))

    def changed(sid, fmt, part):
        return {**c.shown(h.changed(sid, fmt, part)), c.message: ""}

    inputs = {c.sid, c.prompt, c.template, c.fmt, c.steps, c.part}
    outputs = list(c.view)
    # each click's progress on the side by side alone: a status drawn on every output cost the page on each click
    progress = dict(show_progress="minimal", show_progress_on=c.view.shown)
    model_event(c.step.click, step, inputs, outputs, message=c.message, **progress)
    model_event(c.run.click, run, inputs, outputs, message=c.message, show_progress_on=c.view.shown)
    model_event(c.back.click, back, c.sid, outputs, message=c.message, **progress)
    c.reset.click(teach(reset, c.message), c.sid, [*outputs, c.message], show_progress="hidden")
    # a new format, part or prompt format stops a run under way and clears the old one's streams: the page never
    # shows one format's results under another's name (ui.running: why not gradio's `cancels`)
    gr.on(
        [c.fmt.change, c.part.change, c.template.change],
        changed,
        [c.sid, c.fmt, c.part],
        [*outputs, c.message],
        show_progress="hidden",
    )
    # the side by side, when the page missed a change (ui/patch.py)
    c.view.shown.input(h.whole, c.sid, c.view.shown, show_progress="hidden", concurrency_limit=None)
    c.steps.change(run_label, c.steps, c.run, show_progress="hidden")
    m.wire(c.measure, config)
    k.wire(c.kernels, config)


def build(config: AppConfig) -> None:
    wire(layout(config), config)


SPEC = TabSpec(
    "Quantization",
    "quantization",
    90,
    build,
    main="#quantization-step",
    chart="#quantization-dist",
    try_this="#quantization-try",
    buttons="#quantization-buttons",
    summary=(
        "what the bundled GGUF holds; float32 and a rounded copy decoding side by side (KL, Δp, the first "
        "divergence); each format's bytes, speed and quality on this device."
    ),
)
