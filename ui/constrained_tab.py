"""The "Constrained decoding" tab: a grammar as one more mask, live. Layout and one line of wiring per event;
handlers in ui/constrained_handlers.py."""

from functools import partial

import gradio as gr

from decoding.constrained.presets import DEFAULT, PRESETS
from decoding.pipeline import ORDERS
from ui import constrained_handlers as h
from ui.events import model_event
from ui.sessions import release_run
from visuals.constrained import answer_html
from visuals.theme import empty_figure

INTRO = """## Constrained decoding: a grammar as one more mask
To get an answer a program can read (JSON, a date, *yes* or *no*), mask out every token that is not a legal next
piece of the grammar before sampling: the model can only pick among legal tokens, so the answer always parses.
The grammar (compiled by [llguidance](https://github.com/guidance-ai/llguidance) from a JSON schema, a regex, a list
of choices or a Lark grammar) is one more row beside top-k, top-p and min-p. Where only one continuation is legal,
the tokens are **forced**: nothing to sample, and no forward pass of their own (*fast-forward*)."""
TRY_THIS = """**Try this**
1. Preset **extract name and age as JSON**, press **Step**: `{"name":` arrives at once, forced by the grammar
   (dashed wine chips, no model call). Step on: the model only writes the name and the age.
2. Preset **answer yes or no**, press **Step**: the model's favourites, *No* and *Yes* with capitals, are removed by
   the grammar (wine bars); the grammar's row says how much probability the model had put on illegal tokens.
3. Preset **a date as YYYY-MM-DD**, set **top-k** to 1 and the **order** to *llama.cpp*, press **Step**: the chip
   has ↺. top-k 1 kept only the model's favourite, `Ap` (for *Apollo*), which is illegal; llama.cpp drew it, threw it
   away and redid the step with the grammar first (the *Chosen* line says so). Press **Back**, pick *transformers*,
   **Step**: the grammar runs before top-k, so top-k keeps the best legal digit and nothing is redrawn.
4. Type `x` in **Force a token** and press **Force**: refused, and the message names the legal tokens. Press
   **Back**: the forced tokens and the last sampled one go, and the grammar's state rolls back with them.
5. Set **top-k** back to 0, press **Sample 20 times**: the free answers rarely parse; the constrained ones always
   do, and the chart shows how much less likely the model found some of them. Below it, the mask's cost beside one
   forward pass.
"""
ORDER_HINT = "where the grammar runs: transformers and vLLM before the truncations, llama.cpp after (then resamples)"


def build(config) -> None:
    gr.Markdown(INTRO)
    with gr.Accordion("Try this (five steps)", open=False):
        gr.Markdown(TRY_THIS)
    run_id = gr.State(None, delete_callback=release_run)
    first = PRESETS[DEFAULT]
    with gr.Row():
        with gr.Column(scale=2, min_width=320):
            preset = gr.Dropdown(list(PRESETS), value=DEFAULT, label="Preset", elem_id="cd-preset")
            note = gr.Markdown(f"*What to watch:* {first.watch}")
            prompt = gr.Textbox(first.prompt, label="Prompt (one chat turn)", lines=2, elem_id="cd-prompt")
            kind = gr.Radio(list(h.KINDS), value=first.constraint.label, label="Constraint", elem_id="cd-kind")
            text = gr.Code(first.constraint.text, label="Grammar", lines=6, elem_id="cd-text")
            with gr.Row():
                order = gr.Radio(list(ORDERS), value="transformers", label="Engine order", info=ORDER_HINT,
                                 elem_id="cd-order")  # fmt: skip
            with gr.Row():
                temperature = gr.Slider(0, 2, 1.0, step=0.05, label="Temperature", info="0 = greedy")
                top_k = gr.Number(0, label="top-k", info="0 = off", precision=0, minimum=0, elem_id="cd-topk")
                top_p = gr.Slider(0.05, 1, 1.0, step=0.05, label="top-p", info="1 = off")
            with gr.Row():
                seed = gr.Number(0, label="Seed", precision=0, minimum=0)
                max_new = gr.Slider(1, h.MAX_NEW_UI, first.max_new_tokens, step=1, label="Max new tokens")
                ff = gr.Checkbox(True, label="Fast-forward forced tokens", elem_id="cd-ff")
        with gr.Column(scale=3, min_width=560):
            with gr.Row():
                step_btn = gr.Button("Step", variant="primary", elem_id="cd-step")
                end_btn = gr.Button("Run to end", elem_id="cd-end")
                back_btn = gr.Button("Back", elem_id="cd-back")
                reset_btn = gr.Button("Reset", elem_id="cd-reset")
            with gr.Row():
                token = gr.Textbox(label="Force a token", placeholder="one token, e.g. yes", scale=3,
                                   elem_id="cd-token")  # fmt: skip
                force_btn = gr.Button("Force", scale=1, elem_id="cd-force")
            status = gr.Markdown(elem_id="cd-status")
            answer = gr.HTML(answer_html([]), elem_id="cd-answer")
            chart = gr.Plot(empty_figure(h.CHART_BLANK, 420), show_label=False, elem_id="cd-chart")
            rows = gr.Markdown(elem_id="cd-rows")
    orders = gr.Markdown(elem_id="cd-orders")

    gr.Markdown("### The same prompt, N times, without and with the constraint")
    with gr.Row():
        n = gr.Slider(1, h.MAX_SAMPLES, 20, step=1, label="Samples (seeds seed .. seed + N - 1)", scale=3)
        measure_btn = gr.Button("Sample 20 times", variant="primary", scale=1, elem_id="cd-measure")
        cancel_btn = gr.Button("Cancel", scale=1)
    measure_plot = gr.Plot(empty_figure(h.MEASURE_BLANK, 300), show_label=False, elem_id="cd-measure-plot")
    measure_md = gr.Markdown(elem_id="cd-measure-md")

    started = [run_id, prompt, kind, text, seed, max_new, ff]
    knobs = [order, temperature, top_k, top_p]
    outputs = [run_id, status, answer, chart, rows, orders]
    preset.change(h.apply_preset, preset, [prompt, kind, text, max_new, note]).then(h.reset, run_id, outputs)
    n.change(lambda v: gr.update(value=f"Sample {int(v)} times"), n, measure_btn, show_progress="hidden")
    model_event(step_btn.click, partial(h.step, config), started + knobs, outputs, show_progress="minimal")
    model_event(end_btn.click, partial(h.run_to_end, config), started + knobs, outputs)
    model_event(force_btn.click, partial(h.force, config), [*started, *knobs, token], outputs)
    model_event(back_btn.click, h.back, [run_id, *knobs], outputs, show_progress="minimal")
    reset_btn.click(h.reset, run_id, outputs)
    model_event(measure_btn.click, partial(h.measure, config), [prompt, kind, text, seed, max_new, *knobs, n],
                [measure_plot, measure_md],
                gpu_s=300)  # fmt: skip
    h.CANCEL.wire(cancel_btn)
