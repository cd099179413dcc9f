"""The "Speculative decoding" tab: a cheap draft guesses K tokens, the model checks them all in one forward pass,
round by round, then a whole run timed beside plain decoding. Layout and wiring; handlers in
ui/speculative/handlers.py."""

from dataclasses import dataclass
from functools import partial

import gradio as gr

from decoding.knobs import KNOBS, ORDER_LABEL
from decoding.pipeline import ORDERS
from decoding.stages import REPETITION, TEMPERATURE, TOP_K, TOP_P
from ui.context import CHAT, RAW, AppConfig, quoting_steps
from ui.events import PROGRESS, message_line, model_event, stale_while_running, teach
from ui.group import Group, controls_from
from ui.lesson import lesson, style, try_this
from ui.links import picked_on_load
from ui.patch import patched
from ui.speculative import handlers as h
from ui.speculative.presets import DEFAULT, PRESETS, Preset
from ui.tabs import TabSpec
from ui.validate import knob, knob_slider, whole_number_box
from visuals.glossary import term
from visuals.speculative.captions import EXACTNESS
from visuals.speculative.round import CSS

LESSON = (
    "A cheap draft guesses several tokens, the model checks them all in one pass and keeps those it would have "
    "written: more tokens per pass, the same text."
)
INTRO = """\
Decode is memory-bound: every token costs one full read of the weights, and a pass over 6 tokens reads them once
too. So a cheap **draft** guesses K tokens, the model (the **target**) reads the last token and all K guesses in
**one verify pass**, keeps the guesses that agree with what it would have written, and adds one token of its own.
A round writes 1 to K + 1 tokens for one pass of the model, and the text does not change. The speed comes from a
draft that is **cheap and usually right**; this tab measures when it is and is not."""
TRY_THIS = f"""\
1. Preset **Copy-edit: prompt lookup shines**, press **Prefill**, then **Round** three times (round 1 copies from
   the system prompt and misses; round 2 finds nothing to copy). Round 3: the yellow chips are the last token and its
   earlier occurrence in the prompt (lookup tries the last two tokens first, then one); the purple-outlined tokens
   after it are copied as the guesses (dashed purple chips). Blue ✓ kept, vermillion ✗ struck through: rejected
   (the answer fixes the spelling there), faded: never checked. The bold orange chip, "+1 target", is the model's own
   token, free from the same pass.
2. Press **Round** twice more: round 4 finds nothing to copy and is one plain step, round 5 keeps all eight guesses
   at once. Then **Back**: the last round is undone (its tokens gone, the {term("KV cache")} cropped back), and
   **Round** replays it identically.
3. Press **Run to end**: more than 6 tokens per pass of the model. Plain decoding then runs on the same prompt: the
   same tokens, and speculation faster (the time line shows where the time went: on a 2-core CPU a pass over 9
   tokens costs about two one-token passes, not nine; the more idle the machine, the bigger the gain).
4. Preset **Open story: nothing to copy**, **Run to end**: lookup rarely finds a match, about 1 token per pass, and
   the wrong guesses it does make lengthen the passes: slower than plain decoding.
5. Preset **Early exit: cheap, mostly wrong**, **Run to end**: this model was not trained to exit early, so
   its first 8 layers guess badly and speculation is *slower* than plain decoding.
6. Preset **Sampling: the accept rule** (temperature 1, seed 4), press **Prefill** and **Round** three times: in the
   lower chart each orange dash is the uniform u drawn for a guess, the bar is min(1, p/q). Round 1: the target
   gives the copied guess p = 0, so no u can keep it. Round 3: guesses 1 and 2 are kept (u below a full bar), guess
   3 is rejected (u 0.96 above its bar, 0.92) though the target liked it; the bonus then comes from the residual.
"""


@dataclass(frozen=True)
class Knobs(Group):
    """The sampler knobs' components, named as the SamplerSettings fields they set."""

    temperature: gr.Slider
    top_k: gr.Number
    top_p: gr.Slider
    repetition_penalty: gr.Slider
    order: gr.Dropdown


@dataclass(frozen=True)
class SpecPage:
    sid: gr.State
    preset: gr.Dropdown
    note: gr.Markdown
    more: gr.Accordion  # "More settings"
    prompt: gr.Textbox
    template: gr.Radio
    source: gr.Radio
    k: gr.Number
    layer: gr.Number
    max_new: gr.Slider
    seed: gr.Number
    knobs: Knobs
    prefill: gr.Button
    round: gr.Button
    back: gr.Button
    end: gr.Button
    stop: gr.Button
    reset: gr.Button
    message: gr.HTML  # a bad value, said in words naming its control
    view: h.View  # the outputs' components

    def controls(self, given: dict) -> h.Controls:
        """The run's controls, read from an event's inputs by component."""
        return controls_from(h.Controls, self, given)

    def shown(self, view: h.View) -> dict:
        """A handler's view as {component: value}: `view` holds the components, in the same NamedTuple type."""
        return dict(zip(self.view, view, strict=True))


def _knob(field: str, value: float, info: str) -> gr.Slider:
    """A sampler knob of this tab, its element id the field's with the tab's prefix (`speculative-top_p`)."""
    return knob(field, value, info, elem_id=f"speculative-{field}")


def _controls(p: Preset) -> dict:
    """The left column: the preset, the prompt and the draft, the lesson's knobs; then, in "More settings" (closed,
    opened by a preset that samples), the prompt's format, the length, the samplers (as in Step by step) and the
    seed."""
    preset = gr.Dropdown(list(PRESETS), value=DEFAULT, label="Preset", elem_id="speculative-preset")
    note = gr.Markdown(f"*{p.note}*")
    prompt = gr.Textbox(p.prompt, label="Prompt", lines=3)
    source = gr.Radio(list(h.SOURCES), value=p.source, label="Draft", elem_id="speculative-source")
    with gr.Row():
        k = whole_number_box(p.k, label=h.K_LABEL, elem_id="speculative-k")
        layer = whole_number_box(p.layer, label=h.LAYER_LABEL, elem_id="speculative-l")
    with gr.Accordion("More settings", open=False, elem_id="speculative-more") as more:
        template = gr.Radio([RAW, CHAT], value=p.template, label="Prompt format")
        max_new = knob_slider(1, h.MAX_NEW_UI, p.max_new, step=1, label="Max new tokens", elem_id="speculative-max-new")
        knobs = Knobs(
            temperature=_knob(TEMPERATURE.field, p.temperature, "0 = greedy"),
            # a box, not a slider: a slider's own box puts a typed -4 back to 0 without a word
            top_k=whole_number_box(
                p.top_k, label=KNOBS[TOP_K.field].label, info="0 = off", elem_id="speculative-top_k"
            ),
            top_p=_knob(TOP_P.field, p.top_p, "1 = off"),
            repetition_penalty=_knob(REPETITION.field, p.repetition_penalty, "1 = off"),
            order=gr.Dropdown(list(ORDERS), value="transformers", label=ORDER_LABEL),
        )
        seed = whole_number_box(0, label="Seed", elem_id="speculative-seed")
    return dict(
        preset=preset,
        more=more,
        note=note,
        prompt=prompt,
        template=template,
        source=source,
        k=k,
        layer=layer,
        max_new=max_new,
        seed=seed,
        knobs=knobs,
    )


def layout(config: AppConfig) -> SpecPage:
    """One screen at 1280x720 (as the step tab): "Try this" in the controls' column, so opening it never pushes the
    round down; the buttons, the round's chips and its verify chart together, the round's words under them; then
    the whole run, its tokens per pass beside its timing."""
    style(CSS, "speculative-css")
    lesson(
        LESSON,
        "Speculative decoding: guess several tokens, check them in one pass",
        first="**Start here:** press **Round**: the draft guesses, the model checks every guess in one pass.",
    )
    sid = gr.State(None, delete_callback=h.release_spec)
    blank = h.blank()
    with gr.Row():
        with gr.Column(scale=1, min_width=300):
            with gr.Accordion("Why one pass can check several guesses", open=False, elem_id="speculative-how"):
                gr.Markdown(INTRO)
            try_this(quoting_steps(TRY_THIS, config), 6, "speculative-try")
            controls = _controls(PRESETS[DEFAULT])
        with gr.Column(scale=3, min_width=560):
            with gr.Row(elem_id="speculative-buttons"):
                buttons = dict(
                    prefill=gr.Button("Prefill", elem_id="speculative-prefill"),
                    round=gr.Button("Round", variant="primary", elem_id="speculative-round"),
                    back=gr.Button("Back", elem_id="speculative-back"),
                    end=gr.Button("Run to end", elem_id="speculative-end"),
                    stop=gr.Button("Stop", variant="stop", elem_id="speculative-stop"),
                    reset=gr.Button("Reset", elem_id="speculative-reset"),
                )
            message = message_line("speculative-message")
            # the round: its chips, its verify and decisive charts, its words, the lens at L (one patched element)
            shown = patched(blank.round, elem_id="speculative-round-view")
    gr.Markdown("### Over the whole run")
    # the run: its words, tokens per round and kept by position beside the timing (one patched element)
    run = patched(blank.run, elem_id="speculative-run-view")
    with gr.Accordion("Which settings keep the output exact", open=False):
        gr.Markdown(EXACTNESS)
    view = h.View(sid=sid, round=shown, run=run)
    return SpecPage(sid=sid, **controls, **buttons, message=message, view=view)


def apply_preset(c: SpecPage, name) -> dict:
    """The preset's values into their controls; an unknown name changes nothing."""
    if name not in PRESETS:
        return {}
    p = PRESETS[name]
    # a preset that samples opens "More settings", where its samplers are
    sampled = p.temperature > 0 or p.repetition_penalty != REPETITION.neutral
    return {
        c.more: gr.Accordion(open=True) if sampled else gr.skip(),
        c.prompt: p.prompt,
        c.template: p.template,
        c.source: p.source,
        c.k: p.k,
        c.layer: p.layer,
        c.max_new: p.max_new,
        c.knobs.temperature: p.temperature,
        c.knobs.top_k: p.top_k,
        c.knobs.top_p: p.top_p,
        c.knobs.repetition_penalty: p.repetition_penalty,
        c.note: f"*{p.note}*",
    } | ({c.seed: p.seed} if p.seed is not None else {})


def wire(c: SpecPage, config: AppConfig) -> None:
    """One event per click, its answer the session id and the two views (each sending only what changed); its
    progress shown on the round's view alone (a status on every output cost the page on each click)."""

    def prefill(given):
        return c.shown(h.prefill(config, given[c.sid], c.controls(given)))

    def step(given):
        return c.shown(h.step(config, given[c.sid], c.controls(given)))

    def run_to_end(given, progress=PROGRESS, request: gr.Request = None):
        return c.shown(h.run_to_end(config, given[c.sid], c.controls(given), progress=progress, request=request))

    def back(sid):
        return c.shown(h.back(config, sid))

    def reset(sid):
        return c.shown(h.reset(sid))

    inputs = {c.sid, c.prompt, c.template, c.source, c.k, c.layer, c.max_new, c.seed, *c.knobs.components()}
    outputs = list(c.view)
    on_round = dict(message=c.message, show_progress="minimal", show_progress_on=c.view.round)
    knobs = c.knobs
    preset_outputs = [c.more, c.prompt, c.template, c.source, c.k, c.layer, c.max_new, c.note, c.seed]
    preset_outputs += [knobs.temperature, knobs.top_k, knobs.top_p, knobs.repetition_penalty]
    c.preset.change(lambda name: apply_preset(c, name), c.preset, preset_outputs).then(
        teach(reset, c.message), c.sid, [*outputs, c.message], show_progress="hidden"
    )
    model_event(c.prefill.click, prefill, inputs, outputs, **on_round)
    model_event(c.round.click, step, inputs, outputs, **on_round)
    model_event(c.back.click, back, c.sid, outputs, **on_round)
    # one progress bar, over the round's view: on every output it drew the same bar several times over
    model_event(c.end.click, run_to_end, inputs, outputs, message=c.message, show_progress_on=c.view.round)
    h.STOPS.wire(c.stop)  # between two rounds; the run's own answer says it stopped
    c.reset.click(teach(reset, c.message), c.sid, [*outputs, c.message], show_progress="hidden")
    # a view that missed a change asks for its whole self (ui/patch.py)
    for part in ("round", "run"):
        element = getattr(c.view, part)
        element.input(partial(h.whole, part=part), c.sid, element, show_progress="hidden", concurrency_limit=None)


def build(config: AppConfig):
    """The tab; returns the function app.py calls with the page, to pick a shared link's preset as it loads."""
    c = layout(config)
    wire(c, config)
    return picked_on_load("speculative", c.preset, c.message, PRESETS)


SPEC = TabSpec(
    "Speculative decoding",
    "speculative",
    70,
    build,
    main="#speculative-round",  # the round's button, not Prefill's: the round draws the verify chart
    chart="#speculative-verify",  # inside the round's view
    try_this="#speculative-try",
    buttons="#speculative-buttons",
    # in projector mode a round's rows of chips sit closer, so its verify chart still fits under them at 1280x720
    css=".projector .speculative-round { line-height: 2; }\n"
    + stale_while_running("#speculative-round-view", "#speculative-run-view", "#speculative-message"),
    presets=tuple(PRESETS),
    summary=(
        "a cheap draft guesses K tokens and the model checks them in one pass; the accept rule, round by round, and "
        "the speed-up beside plain decoding."
    ),
)
