"""Step by step: watch the model choose one token at a time, change a knob between steps, force a token,
go back and branch. Layout and one line of wiring per event; the handlers are in ui/step_handlers.py."""

from functools import partial

import gradio as gr

from ui import step_handlers as h
from ui import step_view, validate
from ui.context import AppConfig
from ui.events import model_event, teach
from ui.sessions import release_run
from ui.step_controls import prompt_controls, sampler_controls
from ui.step_lessons import WALKTHROUGH
from ui.strategy_code import code_view
from visuals import distribution, sequence
from visuals.theme import empty_figure

# gr.Plot has no click event (gradio 6.31: only change): listen to plotly's own click,
# put the token id in a hidden box and press a hidden button
FORCE_ON_CLICK_JS = """
const attach = () => {
  const plot = document.querySelector('#step-dist .js-plotly-plot');
  if (!plot || plot._forceHooked || !plot.on) return;
  plot._forceHooked = true;
  plot.on('plotly_click', (ev) => {
    const point = (ev.points || []).find((pt) => pt.customdata);
    if (!point) return;
    const box = document.querySelector('#force-click textarea, #force-click input');
    box.value = String(point.customdata[0]);
    box.dispatchEvent(new Event('input', {bubbles: true}));
    setTimeout(() => document.querySelector('#force-click-btn').click(), 50);
  });
};
new MutationObserver(attach).observe(document.body, {childList: true, subtree: true});
"""
CSS = """
#step-buttons button { min-width: 70px; }
.step-walk { font-size: 15px; }
"""


STRATEGIES_NOTE = (
    "The model's raw logits for the next token, through each strategy on its own (your value, or its usual "
    "value when it is off): how many tokens each keeps and how much probability they hold. Bars in pale colours "
    "are removed; the dash is the probability the strategy would sample that token with."
)


def side_view(run_id, *knobs):
    """The panels below the chart; bad settings are reported by the step itself, so they just keep their look."""
    try:
        settings = h.settings_from(*knobs)
    except (ValueError, TypeError):  # gr.Error is a ValueError
        settings = None
    return step_view.side_view(run_id, settings)


def build(config: AppConfig) -> None:
    gr.HTML(f"<style>{sequence.CSS}{CSS}</style>", js_on_load=FORCE_ON_CLICK_JS)
    with gr.Accordion("Try this (five steps)", open=True):
        gr.Markdown(WALKTHROUGH, elem_classes="step-walk")
    run_id = gr.State(None, delete_callback=release_run)
    with gr.Row():
        with gr.Column(scale=1, min_width=320):
            model, preset, preset_note, prompt, template, templated, prompt_chips = prompt_controls(config)
            knobs, seed, max_new, stops = sampler_controls()
        with gr.Column(scale=2, min_width=560):
            with gr.Row(elem_id="step-buttons"):
                prefill_btn = gr.Button("Prefill", variant="primary", elem_id="btn-prefill")
                step_btn = gr.Button("Step", variant="primary", elem_id="btn-step")
                back_btn = gr.Button("Back", elem_id="btn-back")
                run_n_btn = gr.Button("Run N", elem_id="btn-run-n")
                n_steps = validate.whole_number_box(5, container=False, min_width=70, scale=0, elem_id="run-n")
                end_btn = gr.Button("Run to end", elem_id="btn-run-end")
                stop_btn = gr.Button("Stop", variant="stop", elem_id="btn-stop")
                reset_btn = gr.Button("Reset", elem_id="btn-reset")
            alone = gr.Checkbox(
                value=False,
                label="Run my steps alone",
                info="off: your steps share forward passes with everyone's (continuous batching); on: a pass of "
                "your own, bit-exact with generate()",
                elem_id="step-alone",
            )
            loop = gr.HTML(sequence.loop_html("context", 0, 0), elem_id="step-loop")
            chips = gr.HTML(elem_id="step-chips")
            stop_reason = gr.HTML(elem_id="step-stop")
            chart = gr.Plot(
                empty_figure("Press Prefill to see the first distribution"), show_label=False, elem_id="step-dist"
            )
            with gr.Row(equal_height=True):
                mode = gr.Radio(
                    list(distribution.MODES),
                    value=distribution.MODES[0],
                    label="Bars show",
                    scale=3,
                    info="the model's own probabilities, after your settings, or the raw logits",
                )
                candidate = gr.Dropdown(
                    [],
                    label="Force a token (or click its bar)",
                    scale=2,
                    info="the step shown picks this instead; the run branches",
                )
                force_btn = gr.Button("Force", scale=0, min_width=80, elem_id="btn-force")
            click_box = gr.Textbox(visible="hidden", elem_id="force-click")
            click_btn = gr.Button(visible="hidden", elem_id="force-click-btn")
            orders_md = gr.Markdown(elem_id="step-orders")
            with gr.Accordion("Same logits, each strategy alone", open=True):
                gr.Markdown(STRATEGIES_NOTE, elem_classes="hint")
                strategies_chart = gr.Plot(
                    empty_figure(step_view.STRATEGIES_BLANK, 260), show_label=False, elem_id="step-strategies"
                )
                code_view()
            penalty_chart = gr.Plot(label="Penalties this step")
            timeline_chart = gr.Plot(label="Time", elem_id="step-time")
            numbers = gr.Markdown(elem_id="step-numbers")
            with gr.Row():
                save_btn = gr.Button("Save trace (JSON + CSV)")
                files = gr.File(label="Trace files", file_count="multiple", interactive=False, height=120)
                upload = gr.File(
                    label="Load a trace (JSON) to replay it without a model", file_types=[".json"], height=120
                )

    view = [chips, loop, stop_reason, chart, candidate, orders_md, numbers, run_id]
    side = [penalty_chart, timeline_chart, strategies_chart]
    live = [run_id, mode, *knobs]

    def on_model(triggers, fn, inputs, outputs=view, **options):
        return model_event(triggers, fn, inputs, outputs, show_progress="minimal", **options)

    def then_side(event, **options):  # the panels below the chart follow, so they never delay it
        return event.then(side_view, [run_id, *knobs], side, show_progress="hidden", **options)

    preset.change(h.apply_preset, preset, [prompt, template, *knobs[:5], max_new, preset_note])
    prompt_triggers = [model.change, prompt.blur, template.change, preset.change]
    on_model(prompt_triggers, partial(h.prompt_view, config), [model, prompt, template], [templated, prompt_chips],
             api_name="prompt_view")  # fmt: skip
    prefill_inputs = [run_id, model, prompt, template, seed, max_new, stops, mode, *knobs, alone]

    def prefill(*values):
        return h.prefill(config, *values[:-1], alone=values[-1])

    then_side(on_model(prefill_btn.click, prefill, prefill_inputs, api_name="prefill"))
    alone.change(teach(h.set_alone), [run_id, alone], None, show_progress="hidden")
    then_side(on_model(step_btn.click, h.step, live), api_name="step_side")
    then_side(on_model(back_btn.click, h.back, live))
    then_side(on_model(force_btn.click, h.force, [run_id, candidate, mode, *knobs]))
    then_side(on_model(click_btn.click, h.force, [run_id, click_box, mode, *knobs]))
    run_n = on_model(run_n_btn.click, h.run_steps, [run_id, n_steps, mode, *knobs])
    run_end = on_model(end_btn.click, h.run_to_end, live)
    then_side(run_n)
    then_side(run_end)
    then_side(stop_btn.click(None, cancels=[run_n, run_end]))
    then_side(reset_btn.click(h.reset, run_id, view))
    knob_moves = [k.release for k in knobs[:-1]] + [knobs[-1].change]
    then_side(on_model(knob_moves, h.settings_changed, live, trigger_mode="always_last"))
    mode.change(teach(step_view.redraw_chart), [run_id, mode], chart)
    save_btn.click(teach(h.save_trace), run_id, files)
    then_side(upload.upload(teach(h.load_trace), [run_id, upload, mode, knobs[-1]], view))
