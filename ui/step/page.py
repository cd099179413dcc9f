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
from ui.step.links import Opened
from ui.step.view import STRATEGIES_BLANK, Answer, Started, blank_below, blank_stage, start_line
from ui.strategy_code import code_view
from visuals.chart import empty_html
from visuals.step import sequence

LESSON = (
    "At each step the model gives every token a probability, a decoding strategy picks one, the text grows by it, "
    "and the model is asked again."
)
CSS = """
#step-buttons button { min-width: 64px; }
#step-buttons { gap: 8px; }
#step-top { gap: 4px; }
.step-walk { font-size: calc(15px * var(--lab-type, 1)); }
.step-walk ol { margin-top: 0; }
#step-why:not(:has(p)) { display: none; }
"""
# narrow screens: the width is the one the page's script scrolls the chart into view at (ui/step/keys.py)
NARROW_CSS = f"""
/* narrow screens (a phone) stack the columns: under the buttons the stage (the chart, the strip), then the knobs, then
   the panels below the chart, so the temperature is not 3,000 px down, under every panel; and the message line,
   which says what is wrong with a knob, stays in view at the top while it holds a message */
@media (max-width: {keys.STACKED_PX}px) {{
  #step-main {{ flex-direction: column; }}
  #step-chart-col, #step-main > .column:first-child {{ display: contents; }}
  #step-stage {{ order: -2; }}
  #step-main > .column:first-child > * {{ order: -1; }}
  /* the lesson's three knobs stay at the bottom of the screen while the chart above them is on it (sticky within the
     stacked columns, whose box starts at the chart): the chart reshapes under the finger that moves a knob. Their
     hints show while a knob is touched, so the bar leaves the chart its room */
  #step-knobs {{ position: sticky; bottom: 0; z-index: 20; gap: 0; padding: 2px 0;
    background: var(--background-fill-primary); box-shadow: 0 -4px 10px -6px rgba(0, 0, 0, 0.35); }}
  #step-knobs > .form, #step-knobs .block {{ border-width: 0; box-shadow: none; }}  /* (style: a block's own) */
  #step-knobs .block {{ padding-top: 2px; padding-bottom: 2px; }}
  #step-knobs .wrap {{ gap: 0; }}
  #step-knobs .head {{ margin-bottom: 0; }}
  #step-knobs .block:not(:focus-within) .info-text {{ display: none; }}
  #step-message:has(.lab-error) {{ position: sticky; top: 0; z-index: 30; background: var(--background-fill-primary); }}
  #step-main .cm-line {{ white-space: pre-wrap !important; overflow-wrap: anywhere; }}
  /* a button's words on one line: "Run to end" took three lines in a fifth of a phone; the row wraps instead */
  #step-buttons {{ flex-wrap: wrap; }}
  #step-buttons button {{ white-space: nowrap; flex: 1 1 auto; }}
}}
"""
CSS += (
    NARROW_CSS
    + """
/* the stage's pieces (ui/step/view.py), a line's gap apart, as gradio's blocks were */
#step-stage .patched > div + div { margin-top: 10px; }
/* the stage's own controls (native, so a click writes one element): the bars' mode and the token to force */
.step-mode { border: none; padding: 0; margin: 6px 0; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.step-mode legend { font-weight: 600; padding: 0; }
.step-mode .hint, .step-picker .hint { flex-basis: 100%; font-size: 0.85em; opacity: 0.85; }
.step-picker { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; margin: 6px 0; }
.step-picker label { font-weight: 600; }
.step-picker select { max-width: 100%; padding: 4px; border: 1px solid var(--border-color-primary);
  border-radius: var(--radius-sm); background: var(--input-background-fill); color: var(--body-text-color); }
.step-picker button { padding: 4px 18px; border-radius: var(--radius-lg); font-weight: 600;
  border: 1px solid var(--button-secondary-border-color); background: var(--button-secondary-background-fill);
  color: var(--button-secondary-text-color); cursor: pointer; }
.step-keys kbd { border: 1px solid rgba(128,128,128,.6); border-radius: 4px; padding: 0 5px; font-size: 0.9em; }
"""
)

STYLE = sequence.CSS + CSS  # the page's style sheet: in the app's cached head (ui/step/tab.py's SPEC.head)

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
    more: gr.Accordion  # "More settings": every knob and switch the lesson is not about
    seed: gr.Number
    max_new: gr.Number
    stops: gr.Textbox
    model: gr.Dropdown
    template: gr.Radio
    reads: Reads
    alone: gr.Checkbox
    path: gr.Radio  # the decode step's path, eager or static (captured on a GPU), from the next Prefill
    copy: gr.Button
    link: gr.Textbox
    page: gr.Textbox  # what a click reads from the page, in one box its script keeps (ui/step/page_state.py)
    stage: gr.HTML  # the chart, the loop, the strip, the stop line, the force row, the orders: patched
    strategies_panel: gr.Accordion  # "Same logits, each strategy alone"
    strategies: gr.HTML
    strategies_draw: gr.Button  # pressed by the page's script when the panel comes on screen showing an older chart
    lens: lens_panel.LensPanel
    below: gr.HTML  # the penalties, the time chart, the request's numbers: patched
    redraw: gr.Button  # pressed by the page's script when "Bars show" changes
    click_box: gr.Textbox  # a token id, put there by a click on its bar or the Force button (ui/step/keys.py)
    click: gr.Button
    save: gr.Button
    files: gr.File
    upload: gr.File

    @property
    def answer(self) -> Answer:
        """The elements a click's answer writes."""
        return Answer(stage=self.stage, strategies=self.strategies, lens=self.lens.view, below=self.below)

    @property
    def started(self) -> Started:
        """The elements the answer of a click that starts (or ends) a run writes."""
        return Started(*self.answer, run_id=self.run_id)

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
            more=self.more,
        )


def layout(config: AppConfig, opened: Opened) -> StepPage:
    """The page (inside the caller's gr.Tab), its components by name; `opened` is what a page with no link starts
    with (ui.step.links.open_link): the default preset, its settings note and what the model reads."""
    with gr.Column(elem_id="step-top"):  # the lesson's line and what to press, one block apart by a line's gap
        lesson(LESSON)
        start = gr.Markdown(start_line(DEFAULT_PRESET, config), elem_id="step-start", elem_classes="step-keys")
    run_id = gr.State(None, delete_callback=release_run)
    with gr.Row(equal_height=True):
        preset, prompt = lesson_controls()
    row = buttons()
    message = message_line("step-message")
    with gr.Row(elem_id="step-main"):
        with gr.Column(scale=1, min_width=300):
            left = knob_column(config, opened.note, opened.reads)
        with gr.Column(scale=2, min_width=520, elem_id="step-chart-col"):
            right = chart_column(run_id)
    row = Buttons(**row, **left.pop("run_n"))  # Run N and its box are in "More settings"
    return StepPage(
        start=start, run_id=run_id, preset=preset, prompt=prompt, buttons=row, message=message, **left, **right
    )


def chart_column(run_id: gr.State) -> dict:
    """The stage (the chart and its loop, chips and stop line, the force row, the engine orders), the panels below,
    the trace files. Returns its components by their `StepPage` names."""
    stage = patched(blank_stage(), elem_id="step-stage")
    click_box = gr.Textbox(visible="hidden", elem_id="step-force-click")
    click = gr.Button(visible="hidden", elem_id="step-force-click-btn")
    redraw = gr.Button(visible="hidden", elem_id="step-redraw")
    page = gr.Textbox(visible="hidden", elem_id="step-page-state")  # not "step-page": the lesson column's id (app.py)
    with gr.Accordion("Same logits, each strategy alone", open=True, elem_id="step-strategies-panel") as panel:
        gr.Markdown(STRATEGIES_NOTE, elem_classes="hint")
        strategies = gr.HTML(empty_html(STRATEGIES_BLANK, 200), elem_id="step-strategies")
        code_view()
    strategies_draw = gr.Button(visible="hidden", elem_id="step-strategies-draw")
    lens = lens_panel.layout()
    below = patched(blank_below(), elem_id="step-below")
    with gr.Row():
        save = gr.Button("Save trace (JSON + CSV)")
        files = gr.File(label="Trace files", file_count="multiple", interactive=False, height=120)
        upload = gr.File(label="Load a trace (JSON) to replay it without a model", file_types=[".json"], height=120)
    return dict(
        page=page,
        stage=stage,
        strategies_panel=panel,
        strategies=strategies,
        strategies_draw=strategies_draw,
        lens=lens,
        below=below,
        redraw=redraw,
        click_box=click_box,
        click=click,
        save=save,
        files=files,
        upload=upload,
    )
