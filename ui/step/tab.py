"""Step by step: watch the model choose one token at a time, change a knob between steps, force a token,
go back and branch. Layout and one line of wiring per event; the handlers are in ui/step/handlers.py.

The loop fits one screen (1280×720): the preset and prompt, then Prefill, Step and Back, then the chart beside the
temperature; "Try this" sits in the knobs' column, so opening it never pushes the chart down."""

from functools import partial

import gradio as gr

from ui import validate
from ui.context import AppConfig
from ui.events import model_event, teach
from ui.sessions import release_run
from ui.step import handlers as h
from ui.step import keys as step_keys
from ui.step import links as step_links
from ui.step import view as step_view
from ui.step.controls import (
    advanced_controls,
    lesson_controls,
    prompt_details,
    temperature_knob,
    truncation_knobs,
)
from ui.step.lessons import DEFAULT_PRESET, WALKTHROUGH
from ui.strategy_code import code_view
from visuals import distribution, sequence
from visuals.theme import empty_figure

CSS = """
#step-buttons button { min-width: 64px; }
#step-buttons { gap: 8px; }
.step-walk { font-size: 15px; }
.step-walk ol { margin-top: 0; }
#step-style { display: none; }
#step-message:not(:has(.step-error)), #step-why:not(:has(p)) { display: none; }
#step-message .step-error { border-left: 4px solid #b00020; padding: 4px 10px; font-size: 16px; }
/* narrow screens stack the columns: the chart first, right under the buttons */
@media (max-width: 900px) { #step-chart-col { order: -1; } }
.step-keys kbd { border: 1px solid rgba(128,128,128,.6); border-radius: 4px; padding: 0 5px; font-size: 0.9em; }
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


def build(config: AppConfig):
    """The tab; returns the function app.py calls with the page, to open a shared link's setup on load."""
    gr.HTML(f"<style>{sequence.CSS}{CSS}</style>", js_on_load=step_keys.JS, container=False, elem_id="step-style")
    start = gr.Markdown(step_view.start_line(DEFAULT_PRESET), elem_id="step-start", elem_classes="step-keys")
    run_id = gr.State(None, delete_callback=release_run)
    with gr.Row(equal_height=True):
        preset, prompt = lesson_controls()
    with gr.Row(elem_id="step-buttons"):
        prefill_btn = gr.Button("Prefill", variant="primary", elem_id="btn-prefill")
        step_btn = gr.Button("Step", variant="primary", elem_id="btn-step")
        back_btn = gr.Button("Back", elem_id="btn-back")
        run_n_btn = gr.Button("Run N", elem_id="btn-run-n")
        n_steps = validate.whole_number_box(5, container=False, min_width=64, scale=0, elem_id="run-n")
        end_btn = gr.Button("Run to end", elem_id="btn-run-end")
        stop_btn = gr.Button("Stop", variant="stop", elem_id="btn-stop")
        reset_btn = gr.Button("Reset", elem_id="btn-reset")
    message = gr.HTML(elem_id="step-message")
    with gr.Row(elem_id="step-main"):
        with gr.Column(scale=1, min_width=300):
            temperature = temperature_knob()
            why = gr.Markdown(elem_id="step-why")
            with gr.Accordion("Try this (five steps)", open=True, elem_id="step-try"):
                gr.Markdown(WALKTHROUGH, elem_classes="step-walk")
            top_k, top_p, min_p = truncation_knobs()
            repetition, presence, frequency, seed, max_new, stops, order = advanced_controls()
            model, template, templated, prompt_chips = prompt_details(config)
            alone = gr.Checkbox(
                value=False,
                label="Run my steps alone",
                info="off: your steps share forward passes with everyone's (continuous batching); on: a pass of "
                "your own, bit-exact with generate()",
                elem_id="step-alone",
            )
            copy_btn = gr.Button("Copy a link to this setup", size="sm", elem_id="btn-copy-link")
            link = gr.Textbox(label="Link", interactive=False, visible=True, elem_id="step-link", max_lines=2)
        with gr.Column(scale=2, min_width=520, elem_id="step-chart-col"):
            chart = gr.Plot(
                empty_figure("Press Prefill to see the first distribution", 400), show_label=False, elem_id="step-dist"
            )
            loop = gr.HTML(sequence.loop_html("context", 0, 0), elem_id="step-loop")
            chips = gr.HTML(elem_id="step-chips")
            stop_reason = gr.HTML(elem_id="step-stop")
            with gr.Row(equal_height=True):
                mode = gr.Radio(
                    list(distribution.MODES),
                    value=distribution.MODES[0],
                    label="Bars show",
                    scale=3,
                    info="what the next token is drawn from (dash: the model's own), the model's own, or the logits",
                    elem_id="step-mode",
                )
                candidate = gr.Dropdown(
                    [],
                    label="Force a token (or click its bar)",
                    scale=2,
                    info="the step shown picks this instead; the run branches",
                    elem_id="step-candidate",
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

    knobs = [temperature, top_k, top_p, min_p, repetition, presence, frequency, order]
    view = [chips, loop, stop_reason, chart, candidate, orders_md, numbers, run_id, message]
    side = [penalty_chart, timeline_chart, strategies_chart]
    live = [run_id, mode, *knobs]
    said = step_view.said

    def on_model(triggers, fn, inputs, outputs=view, **options):
        return model_event(triggers, fn, inputs, outputs, show_progress="minimal", **options)

    def then_side(event, **options):  # the panels below the chart follow, so they never delay it
        return event.then(side_view, [run_id, *knobs], side, show_progress="hidden", **options)

    # a preset applies when the learner picks one (not when a shared link sets it with its own settings)
    picked = preset.input(h.apply_preset, preset, [prompt, template, *knobs[:5], max_new, start])
    read = partial(h.prompt_view, config)
    on_model([model.change, prompt.blur, template.change], read, [model, prompt, template], [templated, prompt_chips],
             api_name="prompt_view")  # fmt: skip
    picked.then(teach(read), [model, prompt, template], [templated, prompt_chips], **h.QUIET)
    picked.then(h.settings_note, knobs, why, **h.QUIET)
    prefill_inputs = [run_id, model, prompt, template, seed, max_new, stops, mode, *knobs, alone]

    def prefill(*values):
        return h.prefill(config, *values[:-1], alone=values[-1])

    then_side(on_model(prefill_btn.click, said(prefill), prefill_inputs, api_name="prefill"))
    alone.change(teach(h.set_alone), [run_id, alone], None, show_progress="hidden")
    then_side(on_model(step_btn.click, said(h.step), live), api_name="step_side")
    then_side(on_model(back_btn.click, said(h.back), live))
    then_side(on_model(force_btn.click, said(h.force), [run_id, candidate, mode, *knobs]))
    then_side(on_model(click_btn.click, said(h.force), [run_id, click_box, mode, *knobs]))
    run_n = on_model(run_n_btn.click, said(h.run_steps), [run_id, n_steps, mode, *knobs])
    run_end = on_model(end_btn.click, said(h.run_to_end), live)
    then_side(run_n)
    then_side(run_end)
    then_side(stop_btn.click(None, cancels=[run_n, run_end]))
    then_side(reset_btn.click(said(h.reset), run_id, view))
    knob_moves = [k.release for k in knobs[:-1]] + [knobs[-1].change]
    then_side(on_model(knob_moves, said(h.settings_changed), live, trigger_mode="always_last"))
    gr.on(knob_moves, h.settings_note, knobs, why, **h.QUIET)
    mode.change(teach(step_view.redraw_chart), [run_id, mode], chart)
    save_btn.click(teach(h.save_trace), run_id, files)
    then_side(upload.upload(said(h.load_trace), [run_id, upload, mode, knobs[-1]], view))
    copy_btn.click(None, [preset, *knobs[:5], seed], link, js=step_links.COPY_JS)

    shared = [preset, prompt, template, *knobs[:5], seed, max_new, start, message, why, templated, prompt_chips]

    def load_link(request: gr.Request):
        return step_links.open_link(config, request)

    def on_page_load(demo: gr.Blocks) -> None:
        demo.load(load_link, None, shared, **h.QUIET)

    return on_page_load
