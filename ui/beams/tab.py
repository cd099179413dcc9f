"""The "Beam search & repetition" tab: beam search one step at a time beside greedy, then (from
ui/beams/repetition.py) why greedy loops. Layout and one line of wiring per event; handlers in ui/beams/handlers.py."""

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import gradio as gr

from ui.beams import handlers as h
from ui.beams import repetition as repetition_panel
from ui.context import CHAT, RAW, AppConfig, quoting, quoting_steps
from ui.events import PROGRESS, message_line, model_event, stale_while_running, teach
from ui.group import Group
from ui.lesson import lesson, style, try_this
from ui.links import picked_on_load
from ui.tabs import TabSpec
from ui.validate import knob_slider
from visuals.beams.search import beams_markdown
from visuals.glossary import term
from visuals.theme import empty_figure

LESSON = "Beam search keeps several partial answers and extends the best; greedy keeps one."
INTRO = f"""\
Greedy takes the most probable token (the {term("argmax")}) at every step, which is only *locally* best: a slightly
less likely word now can open a much more likely sentence later. **Beam search** keeps several partial sequences
(beams). At each step every live beam is extended by every token of the vocabulary, each extension is scored by
its **cumulative log-probability**, and only the best `num_beams` survive. A beam that ends (end-of-turn token, or
the length limit) is set aside as a finished hypothesis, ranked by its length-penalised score. The steps are exactly
those of transformers' `generate(num_beams=k, do_sample=False)`: the answer is the same, token for token."""
TRY_THIS = """\
1. Pick the preset **2 + 2: a more probable answer**, press **Step** a few times: blue paths are live beams, grey dots
   candidates that were scored and pruned. Hover a node for its log-probabilities.
2. Press **Run to end**. Below the tree: greedy's *The answer to this classic math problem is 4.* has total log p
   −9.25, beam search's *2 + 2 = 4* −4.60, about 100× more probable, though greedy took the likeliest token each time.
3. Open **More settings**, set **length penalty** to 2 and run again: longer hypotheses now score better, and the
   answer is a 20-token text *less* probable than greedy's. Back at 1, set **early stopping** to True: the same
   answer, three steps sooner.
4. Pick **open-ended story**, press **Run to end**, then the same with **name a color**: beam search returns the
   model's most generic text, a fairy-tale cliché and a stock "as an AI" refusal, far more probable and far blander
   than greedy's.
5. Set **number of beams** to 1: one beam is greedy, the tree a single path with its pruned alternatives.
"""


class Preset(NamedTuple):
    """One preset: the controls it sets, named as the tab's, and what to watch."""

    prompt: str
    template: str
    num_beams: int
    length_penalty: float
    early_stopping: str
    max_new_tokens: int
    note: str


PRESETS = {
    "2 + 2: a more probable answer": Preset(
        prompt="What is 2 + 2?",
        template=CHAT,
        num_beams=4,
        length_penalty=1.0,
        early_stopping="false",
        max_new_tokens=20,
        # no number here: a class plan asks the class to guess how much more probable before Run
        note="Greedy opens with the likeliest word and is stuck with a long sentence. Can a beam that began with a "
        "less likely word end with a more probable whole answer? Press Run to end.",
    ),
    "open-ended story: the cliché": Preset(
        prompt="Tell me a story.",
        template=CHAT,
        num_beams=4,
        length_penalty=1.0,
        early_stopping="false",
        max_new_tokens=40,
        note='Beam search finds the most probable story opening the model knows, a fairy-tale cliché ("A long time '
        "ago, in a land far, far away\"); greedy's own opening is less probable and more specific.",
    ),
    "name a color: the safe refusal": Preset(
        prompt="Name a color.",
        template=CHAT,
        num_beams=4,
        length_penalty=1.0,
        early_stopping="false",
        max_new_tokens=24,
        note="The most probable answer is not an answer: beam search lands on a stock refusal, greedy names a colour.",
    ),
    "raw text continuation": Preset(
        prompt="The best way to learn a language is",
        template=RAW,
        num_beams=4,
        length_penalty=1.0,
        early_stopping="false",
        max_new_tokens=20,
        note="No end-of-turn token in sight: every beam runs to max new tokens, and the most probable one wins.",
    ),
}
DEFAULT = "2 + 2: a more probable answer"
PENALTY_HINT = (  # in backticks: two bare asterisks would turn the rest of the hint bold
    "transformers divides the summed log-probability by the generated `length ** penalty`; vLLM counts the prompt "
    "too. 0: no division (short wins); 1: per-token average; above 1 favours longer answers"
)
EARLY_CHOICES = [
    ("False: stop when no live beam can still win (default)", "false"),
    ("True: stop once num_beams hypotheses have finished", "true"),
    ("never: stop only when no beam could win at max length", "never"),
]
CSS = """
#beams-buttons button { min-width: 90px; }
""" + stale_while_running(
    "#beams-tree", "#beams-status", "#beams-table", "#beams-compare-text", "#beams-compare", "#beams-message"
)


@dataclass(frozen=True)
class BeamKnobs(Group):
    """The search's settings as one value; each field is named as `ui.beams.handlers.Settings`'."""

    num_beams: gr.Slider
    length_penalty: gr.Slider
    early_stopping: gr.Radio
    max_new_tokens: gr.Slider


@dataclass(frozen=True)
class BeamPage:
    preset: gr.Dropdown
    preset_note: gr.Markdown
    prompt: gr.Textbox
    template: gr.Radio
    knobs: BeamKnobs
    step_btn: gr.Button
    end_btn: gr.Button
    stop_btn: gr.Button
    reset_btn: gr.Button
    message: gr.HTML
    view: h.BeamView  # of components: the session id and what shows the search


def note(p: Preset, config: AppConfig) -> str:
    """What a preset shows, as the bundled model wrote it: named as such on another run."""
    return f"*{quoting(p.note, config)}*"


def apply_preset(c: BeamPage, config: AppConfig, name) -> dict:
    if name not in PRESETS:
        return {}
    p = PRESETS[name]
    knobs = {getattr(c.knobs, knob): getattr(p, knob) for knob in h.Settings._fields}
    return {c.prompt: p.prompt, c.template: p.template, **knobs, c.preset_note: note(p, config)}


def shown(c: BeamPage, view: h.BeamView) -> dict:
    """A handler's BeamView as {component: value}, field by field."""
    return dict(zip(c.view, view))


def layout(config: AppConfig) -> BeamPage:
    """The beam search's components, inside the caller's gr.Tab. `config` names the run the lesson's numbers were
    measured on where this run is another: nothing runs at layout."""
    style(CSS, "beams-css")
    lesson(
        LESSON,
        "Beam search, step by step",
        first="**Start here:** press **Step** to grow the beams one token at a time.",
    )
    with gr.Row(equal_height=False):
        with gr.Accordion("How beam search scores a hypothesis", open=False, elem_id="beams-how"):
            gr.Markdown(INTRO)
        try_this(quoting_steps(TRY_THIS, config), 5, "beams-try")
    sid = gr.State(None, delete_callback=h.release_search)
    first = PRESETS[DEFAULT]
    with gr.Row():
        with gr.Column(scale=1, min_width=300):
            preset = gr.Dropdown(
                list(PRESETS), value=DEFAULT, label="Preset", info="each one shows one thing", elem_id="beams-preset"
            )
            preset_note = gr.Markdown(note(first, config))
            prompt = gr.Textbox(first.prompt, label="Prompt", lines=2)
            template, knobs = _knobs()
        with gr.Column(scale=3, min_width=560):
            with gr.Row(elem_id="beams-buttons"):
                step_btn = gr.Button("Step", variant="primary", elem_id="beams-step")
                end_btn = gr.Button("Run to end", elem_id="beams-end")
                stop_btn = gr.Button("Stop", variant="stop", elem_id="beams-stop")
                reset_btn = gr.Button("Reset", elem_id="beams-reset")
            message = message_line("beams-message")
            status = gr.Markdown(elem_id="beams-status")
            tree = gr.Plot(empty_figure(h.TREE_BLANK, 380), show_label=False, elem_id="beams-tree")
            table = gr.Markdown(beams_markdown([]), elem_id="beams-table")
    gr.Markdown("### Greedy beside beam search")
    compare_md = gr.Markdown(elem_id="beams-compare-text")
    compare_plot = gr.Plot(empty_figure(h.COMPARE_BLANK, 300), show_label=False, elem_id="beams-compare")
    gr.Markdown("---")
    view = h.BeamView(sid=sid, tree=tree, table=table, status=status, compare_plot=compare_plot, compare_md=compare_md)
    return BeamPage(
        preset=preset,
        preset_note=preset_note,
        prompt=prompt,
        template=template,
        knobs=knobs,
        step_btn=step_btn,
        end_btn=end_btn,
        stop_btn=stop_btn,
        reset_btn=reset_btn,
        message=message,
        view=view,
    )


def _knobs() -> tuple[gr.Radio, BeamKnobs]:
    """The number of beams, the knob the lesson is about; then, in "More settings" (closed), the prompt's format,
    the length penalty, early stopping and the length."""
    # knob sliders: a typed value out of range reaches the handler's check, which names the control
    low, high = h.PENALTY_RANGE
    num_beams = knob_slider(1, h.MAX_BEAMS_UI, 4, step=1, label="Number of beams", info="1 = greedy", elem_id="beams-k")
    with gr.Accordion("More settings", open=False, elem_id="beams-more"):
        template = gr.Radio(
            [RAW, CHAT],
            value=CHAT,
            label="Prompt format",
            info="raw: the text as typed; chat: one user turn in the model's chat template",
        )
        knobs = BeamKnobs(
            num_beams=num_beams,
            length_penalty=knob_slider(
                low, high, 1.0, step=0.1, label="Length penalty", info=PENALTY_HINT, elem_id="beams-penalty"
            ),
            early_stopping=gr.Radio(EARLY_CHOICES, value="false", label="Early stopping", elem_id="beams-early"),
            max_new_tokens=knob_slider(
                1, h.MAX_NEW_UI, 20, step=1, label="Max new tokens", info="per beam; 1-64", elem_id="beams-max-new"
            ),
        )
    return template, knobs


def wire(c: BeamPage, config: AppConfig) -> None:
    inputs = {c.view.sid, c.prompt, c.template, *c.knobs}

    def step(given: dict) -> dict:
        view = h.step(config, given[c.view.sid], given[c.prompt], given[c.template], c.knobs.read(given))
        return shown(c, view)

    def run_to_end(given: dict, progress=PROGRESS, request: gr.Request = None) -> dict:
        knobs = c.knobs.read(given)
        sid, prompt, template = given[c.view.sid], given[c.prompt], given[c.template]
        return shown(c, h.run_to_end(config, sid, prompt, template, knobs, progress=progress, request=request))

    reset = teach(lambda sid: shown(c, h.reset(sid)), c.message)
    outputs = list(c.view)
    preset_outputs = [c.prompt, c.template, *c.knobs, c.preset_note]
    picked = c.preset.change(partial(apply_preset, c, config), c.preset, preset_outputs)
    picked.then(reset, c.view.sid, [*outputs, c.message])
    model_event(c.step_btn.click, step, inputs, outputs, message=c.message, show_progress="minimal")
    # one bar, over the tree the run grows, which says the beam step; the status, table and comparison dimmed (CSS)
    model_event(c.end_btn.click, run_to_end, inputs, outputs, message=c.message, show_progress_on=c.view.tree)
    h.STOPS.wire(c.stop_btn)  # between two steps; the run's own answer says it stopped
    c.reset_btn.click(reset, c.view.sid, [*outputs, c.message])


def build(config: AppConfig):
    """The beam search (inside the caller's gr.Tab), then the repetition panel below it. Returns the function app.py
    calls with the page, to pick a shared link's preset as it loads."""
    c = layout(config)
    wire(c, config)
    repetition_panel.build(config)
    return picked_on_load("beams", c.preset, c.message, PRESETS)


SPEC = TabSpec(
    "Beam search & repetition",
    "beams",
    60,
    build,
    main="#beams-step",
    chart="#beams-tree",
    try_this="#beams-try",
    buttons="#beams-buttons",
    presets=tuple(PRESETS),
    summary="greedy is only locally optimal; why greedy loops, measured.",
)
