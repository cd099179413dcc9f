"""The "Quantization" tab: float32 and a rounded copy of the same model decode the same prompt greedily, side by side;
then each format's bytes and time measured on this device, and its quality on a held-out text. Layout and wiring;
handlers in ui/quantization_handlers.py (the step) and ui/quantization_measure.py (speed and quality)."""

from dataclasses import dataclass

import gradio as gr

from ui import quantization_handlers as h
from ui import quantization_kernels as k
from ui import quantization_measure as m
from ui.context import CHAT, RAW, AppConfig
from ui.events import message_line, model_event, teach
from ui.validate import whole_number_box
from visuals.quantization import CSS

INTRO = """## Quantization: fewer bytes per token, a slightly different distribution
float32 and a rounded copy of the same weights decode one prompt greedily, side by side. Per step, llama.cpp's
`--kl-divergence` metrics ([perplexity tool](https://github.com/ggml-org/llama.cpp/tree/master/tools/perplexity)):
**KL**(float32 ‖ format), **Δp** of float32's token, **same top-1**, on float32's text."""
TRY_THIS = f"""**Try this**
1. Format **int8**, press **Run {h.RUN_N}**: same top-1 at (almost) every step, KL around 0.004 nats: per-channel
   int8 weights barely move this model.
2. Format **int8-activations**, **Run {h.RUN_N}**: the activations are rounded too, one scale for a whole tensor, and
   the top token changes at about half the steps (vermillion bars). A few huge hidden features (LLM.int8()'s
   outliers) set the scale and round the small ones to nothing.
3. Format **int4**, **Step**: at step 1 float32's top two tokens are less than a point apart, and int4 swaps them:
   the first greedy divergence is outlined on both streams. **Run {h.RUN_N}**: the streams write different text, yet
   on float32's text int4 still agrees most of the time.
4. Under **Measured on this device**, press **Measure**: which of decode and prefill gained, measured here and said
   under the chart.
5. At the bottom, press **Time the kernels**: each low-bit kernel this device has, on the model's own matrices. The
   weight-only int8 and int4 kernels read 4-5× fewer bytes yet take longer than float32: that is why they run
   simulated here.
"""


@dataclass(frozen=True)
class QuantPage:
    sid: gr.State
    prompt: gr.Textbox
    template: gr.Radio
    fmt: gr.Dropdown
    steps: gr.Number
    step: gr.Button
    run: gr.Button
    back: gr.Button
    reset: gr.Button
    message: gr.HTML
    view: h.View  # the step's outputs
    measure: m.MeasurePage  # speed and quality
    kernels: k.KernelsPage  # why a format runs simulated here


def layout(config: AppConfig) -> QuantPage:
    """One screen at 1280x720: the controls on the left, the buttons, both streams and both charts on the right;
    the measurements below."""
    # the style sheet's own box is hidden (its rules still apply), so it adds no gap above the lesson
    gr.HTML(f"<style>{CSS} #q-css {{ display: none; }}</style>", elem_id="q-css")
    gr.Markdown(INTRO)
    blank = h.blank()
    with gr.Row():
        with gr.Column(scale=1, min_width=300):
            with gr.Accordion("Try this (five steps)", open=False, elem_id="q-try"):
                gr.Markdown(TRY_THIS)
            prompt = gr.Textbox("Write a short poem about the sea.", label="Prompt", lines=2, elem_id="q-prompt")
            template = gr.Radio([RAW, CHAT], value=CHAT, label="Prompt format")
            fmt = gr.Dropdown(h.CHOICES, value=h.DEFAULT_FORMAT, label="Format", elem_id="q-format")
            steps = whole_number_box(h.RUN_N, label=h.STEPS_LABEL, elem_id="q-steps")
        with gr.Column(scale=3, min_width=560):
            with gr.Row(elem_id="q-buttons"):
                step = gr.Button("Step", variant="primary", elem_id="q-step")
                run = gr.Button(f"Run {h.RUN_N}", elem_id="q-run")
                back = gr.Button("Back", elem_id="q-back")
                reset = gr.Button("Reset", elem_id="q-reset")
            message = message_line("q-message")
            status = gr.Markdown(blank.status, elem_id="q-status")
            with gr.Row():
                dist = gr.Plot(blank.dist, show_label=False, elem_id="q-dist", scale=3)
                kl = gr.Plot(blank.kl, show_label=False, elem_id="q-kl", scale=2)
            # under the charts: the streams grow with every step, the charts stay where they are
            streams = gr.HTML(blank.streams, elem_id="q-streams")
    sid = gr.State(None, delete_callback=h.release)
    view = h.View(sid=sid, status=status, streams=streams, dist=dist, kl=kl)
    return QuantPage(
        sid=sid,
        prompt=prompt,
        template=template,
        fmt=fmt,
        steps=steps,
        step=step,
        run=run,
        back=back,
        reset=reset,
        message=message,
        view=view,
        measure=m.layout(),
        kernels=k.layout(),
    )


def wire(c: QuantPage, config: AppConfig) -> None:
    def controls(given: dict) -> h.Controls:
        return h.Controls(prompt=given[c.prompt], template=given[c.template], fmt=given[c.fmt], steps=given[c.steps])

    def shown(view: h.View) -> dict:
        return dict(zip(c.view, view, strict=True))

    def step(given):
        return shown(h.step(config, given[c.sid], controls(given)))

    def run(given):
        return shown(h.run_n(config, given[c.sid], controls(given)))

    def back(sid):
        return shown(h.back(sid))

    def reset(sid):
        return shown(h.reset(sid))

    inputs = {c.sid, c.prompt, c.template, c.fmt, c.steps}
    outputs = list(c.view)
    model_event(c.step.click, step, inputs, outputs, message=c.message, show_progress="minimal")
    model_event(c.run.click, run, inputs, outputs, message=c.message, show_progress_on=c.view.streams)
    model_event(c.back.click, back, c.sid, outputs, message=c.message, show_progress="minimal")
    c.reset.click(teach(reset, c.message), c.sid, [*outputs, c.message])
    m.wire(c.measure, config)
    k.wire(c.kernels, config)


def build(config: AppConfig) -> None:
    wire(layout(config), config)
