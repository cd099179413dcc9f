"""The step tab's page: its components, built by `layout` (inside the caller's gr.Tab) and named in `StepPage`, so
the wiring (ui/step/tab.py) and the handlers' outputs read by name.

The loop fits one screen (1280×720): the preset and prompt, then Prefill, Step and Back, then the chart beside the
temperature; "Try this" sits in the knobs' column, so opening it never pushes the chart down."""

from dataclasses import dataclass

import gradio as gr

from ui.context import AppConfig
from ui.events import message_line
from ui.lesson import lesson
from ui.patch import patched
from ui.sessions import release_run
from ui.step import keys
from ui.step import lens as lens_panel
from ui.step.controls import Buttons, Knobs, Reads, Setup, buttons, knob_column, lesson_controls
from ui.step.lessons import DEFAULT_PRESET
from ui.step.view import CHART_BLANK, STRATEGIES_BLANK, View, start_line
from ui.strategy_code import code_view
from visuals import distribution
from visuals.chart import empty_html
from visuals.step import sequence, timeline

LESSON = (
    "At each step the model gives every token a probability, a decoding strategy picks one, the text grows by it, "
    "and the model is asked again."
)
CSS = """
#step-buttons button { min-width: 64px; }
#step-buttons { gap: 8px; }
#step-top { gap: 4px; }
.step-walk { font-size: 15px; }
.step-walk ol { margin-top: 0; }
#step-style { display: none; }
#step-why:not(:has(p)) { display: none; }
/* narrow screens stack the columns: the chart first, right under the buttons */
@media (max-width: 900px) { #step-chart-col { order: -1; } }
.step-keys kbd { border: 1px solid rgba(128,128,128,.6); border-radius: 4px; padding: 0 5px; font-size: 0.9em; }
"""

STRATEGIES_NOTE = (
    "The model's raw logits for the next token, through each strategy on its own (your value, or its usual "
    "value when it is off): how many tokens each keeps and how much probability they hold. Bars in pale colours "
    "are removed; the dash is the probability the strategy would sample that token with."
)


@dataclass(frozen=True)
class StepPage:
    """The tab's components, by name."""

    start: gr.Markdown
    run_id: gr.State
    preset: gr.Dropdown
    prompt: gr.Textbox
    buttons: Buttons
    message: gr.HTML  # the one line where a bad value is said (ui.events.teach)
    knobs: Knobs
    why: gr.Markdown
    seed: gr.Number
    max_new: gr.Number
    stops: gr.Textbox
    model: gr.Dropdown
    template: gr.Radio
    reads: Reads
    alone: gr.Checkbox
    copy: gr.Button
    link: gr.Textbox
    view: View
    strategies_panel: gr.Accordion  # "Same logits, each strategy alone"
    strategies_open: gr.State
    on_screen: gr.Textbox  # the costly panels the page shows now, written by its script (ui/step/keys.py)
    strategies_draw: gr.Button  # pressed by that script when the panel comes on screen showing an older chart
    lens: lens_panel.LensPanel
    mode: gr.Radio
    force: gr.Button
    click_box: gr.Textbox  # a bar's token id, put there by a click on the chart (ui/step/keys.py)
    click: gr.Button
    save: gr.Button
    files: gr.File
    upload: gr.File

    @property
    def setup(self) -> Setup:
        """The controls a preset sets."""
        k = self.knobs
        return Setup(
            prompt=self.prompt,
            template=self.template,
            temperature=k.temperature,
            top_k=k.top_k,
            top_p=k.top_p,
            min_p=k.min_p,
            repetition_penalty=k.repetition_penalty,
            max_new=self.max_new,
            start=self.start,
        )


def layout(config: AppConfig) -> StepPage:
    """The page (inside the caller's gr.Tab), its components by name."""
    gr.HTML(f"<style>{sequence.CSS}{CSS}</style>", js_on_load=keys.JS, container=False, elem_id="step-style")
    with gr.Column(elem_id="step-top"):  # the lesson's line and what to press, one block apart by a line's gap
        lesson(LESSON)
        start = gr.Markdown(start_line(DEFAULT_PRESET), elem_id="step-start", elem_classes="step-keys")
    run_id = gr.State(None, delete_callback=release_run)
    with gr.Row(equal_height=True):
        preset, prompt = lesson_controls()
    row = buttons()
    message = message_line("step-message")
    with gr.Row(elem_id="step-main"):
        with gr.Column(scale=1, min_width=300):
            left = knob_column(config)
        with gr.Column(scale=2, min_width=520, elem_id="step-chart-col"):
            right = chart_column(run_id)
    return StepPage(
        start=start, run_id=run_id, preset=preset, prompt=prompt, buttons=row, message=message, **left, **right
    )


def chart_column(run_id: gr.State) -> dict:
    """The chart and its loop, chips and stop line, the force picker, the engine orders, the panels below, the trace
    files. Returns its components by their `StepPage` names."""
    chart = gr.HTML(empty_html(CHART_BLANK, 360), elem_id="step-dist")
    loop = gr.HTML(sequence.loop_html("context", 0, 0), elem_id="step-loop")
    chips = patched(elem_id="step-chips")
    stop = gr.HTML(elem_id="step-stop")
    with gr.Row(equal_height=True):
        mode, candidate, force = force_row()
    click_box = gr.Textbox(visible="hidden", elem_id="step-force-click")
    click = gr.Button(visible="hidden", elem_id="step-force-click-btn")
    orders = gr.Markdown(elem_id="step-orders")
    with gr.Accordion("Same logits, each strategy alone", open=True, elem_id="step-strategies-panel") as panel:
        gr.Markdown(STRATEGIES_NOTE, elem_classes="hint")
        strategies = gr.HTML(empty_html(STRATEGIES_BLANK, 200), elem_id="step-strategies")
        code_view()
    strategies_open = gr.State(True)  # the panel's vocabulary-sized work is done only while it is open
    on_screen = gr.Textbox(visible="hidden", elem_id="step-on-screen")
    strategies_draw = gr.Button(visible="hidden", elem_id="step-strategies-draw")
    lens = lens_panel.layout()
    penalties = gr.HTML(elem_id="step-penalties")
    time_fig = patched(timeline.timeline_blank().html, elem_id="step-time")
    numbers = gr.Markdown(elem_id="step-numbers")
    with gr.Row():
        save = gr.Button("Save trace (JSON + CSV)")
        files = gr.File(label="Trace files", file_count="multiple", interactive=False, height=120)
        upload = gr.File(label="Load a trace (JSON) to replay it without a model", file_types=[".json"], height=120)
    view = View(
        chips=chips,
        loop=loop,
        stop=stop,
        chart=chart,
        candidate=candidate,
        orders=orders,
        numbers=numbers,
        run_id=run_id,
        penalties=penalties,
        timeline=time_fig,
        strategies=strategies,
        lens_summary=lens.view.summary,
        lens_table=lens.view.table,
        lens_note=lens.view.note,
        lens_curve=lens.view.curve,
    )
    return dict(
        view=view,
        strategies_panel=panel,
        strategies_open=strategies_open,
        on_screen=on_screen,
        strategies_draw=strategies_draw,
        lens=lens,
        mode=mode,
        force=force,
        click_box=click_box,
        click=click,
        save=save,
        files=files,
        upload=upload,
    )


def force_row():
    """What the bars show, and the token to force instead of the draw."""
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
    return mode, candidate, gr.Button("Force", scale=0, min_width=80, elem_id="step-force")
