"""The step tab's controls: the preset and prompt, the buttons, and the sampler knobs with their ranges and usual
values beside them. Each knob's range is written once, in decoding.knobs: the slider is drawn with it and the handler
checks it. The groups of controls are named (`Knobs`, `Buttons`, `Setup`, `Reads`), so the wiring reads by name."""

from dataclasses import dataclass
from typing import NamedTuple

import gradio as gr

from decoding.knobs import SEED_MAX
from decoding.models import allowed_models
from decoding.pipeline import ORDERS
from decoding.stages import FREQUENCY, MIN_P, PRESENCE, REPETITION, TEMPERATURE, TOP_K, TOP_P
from ui import validate
from ui.context import CHAT, RAW, AppConfig, quoting_steps
from ui.group import Group
from ui.lesson import try_this
from ui.step.lessons import DEFAULT_PRESET, PRESETS, WALKTHROUGH


@dataclass(frozen=True)
class Knobs(Group):
    """The sampler's knobs on the page, each named by the `SamplerSettings` field it sets."""

    temperature: gr.Slider
    top_k: gr.Slider
    top_p: gr.Slider
    min_p: gr.Slider
    repetition_penalty: gr.Slider
    presence_penalty: gr.Slider
    frequency_penalty: gr.Slider
    order: gr.Radio

    def sliders(self) -> list[gr.Slider]:
        return [knob for knob in self if knob is not self.order]


@dataclass(frozen=True)
class Buttons:
    prefill: gr.Button
    step: gr.Button
    back: gr.Button
    run_n: gr.Button
    n_steps: gr.Number
    run_end: gr.Button
    stop: gr.Button
    reset: gr.Button


class Setup(NamedTuple):
    """What a preset sets (a shared link too): values from a handler, or the page's components that show them."""

    prompt: object
    template: object
    temperature: object
    top_k: object
    top_p: object
    min_p: object
    repetition_penalty: object
    max_new: object
    start: object
    more: object  # "More settings": opened when the preset or link sets a knob there away from off (`opens_more`)


class Reads(NamedTuple):
    """What the model reads: the exact text, and its tokens as chips."""

    text: object
    chips: object


def knob(field: str, value: float, info: str, **options) -> gr.Slider:
    """A knob of this tab: its keys (ui/step/keys.py) find it by the `knob` class."""
    return validate.knob(field, value, info, elem_classes="knob", **options)


def lesson_controls():
    """The preset (one chosen, so the first screen starts the lesson) and the prompt, side by side."""
    p = PRESETS[DEFAULT_PRESET]
    preset = gr.Dropdown(list(PRESETS), value=DEFAULT_PRESET, label="Preset", scale=1, elem_id="step-preset")
    prompt = gr.Textbox(p.prompt, label="Prompt", lines=1, max_lines=4, scale=2, elem_id="step-prompt")
    return preset, prompt


def buttons() -> dict:
    """The row under the prompt: the lesson's buttons (Run N, its box and Reset wait in "More settings")."""
    with gr.Row(elem_id="step-buttons"):
        return dict(
            prefill=gr.Button("Prefill", variant="primary", elem_id="step-prefill"),
            step=gr.Button("Step", variant="primary", elem_id="step-step"),
            back=gr.Button("Back", elem_id="step-back"),
            run_end=gr.Button("Run to end", elem_id="step-run-end"),
            stop=gr.Button("Stop", variant="stop", elem_id="step-stop-button"),
        )


def run_n_row() -> dict:
    """Run N steps at once, and N, and Reset: in "More settings" (Step and Run to end are the lesson's; a Prefill
    starts afresh as Reset does)."""
    with gr.Row(elem_id="step-run-n-row"):
        return dict(
            run_n=gr.Button("Run N", elem_id="step-run-n"),
            # wide enough for the largest N it takes (4096) and more digits, which a 64 px box cut to "1000"
            n_steps=validate.whole_number_box(5, container=False, min_width=96, scale=0, elem_id="step-n-steps"),
            reset=gr.Button("Reset", elem_id="step-reset"),
        )


def opens_more(min_p: float, repetition: float) -> object:
    """What a preset or a link does to "More settings": opens it when it sets a knob there away from off (the class
    must see the min-p or the penalty it is about), else leaves it as the learner left it."""
    hidden_on = MIN_P.enabled(min_p) or REPETITION.enabled(repetition)
    return gr.Accordion(open=True) if hidden_on else gr.skip()


def knob_column(config: AppConfig, note: str, reads: Reads) -> dict:
    """The column beside the chart: the lesson's three knobs together, and why a setting is skipped under them (`note`
    first; on a narrow screen they stay at the bottom of the screen while the chart is on it, ui/step/page.py), then
    Try this, then "More settings", closed: min-p, the penalties, seed, length, stop strings, the
    engine order, the model and what it reads (`reads` first), the pass mode, and the link to this setup. Returns its
    controls by their `StepPage` names, and Run N's (`run_n`: its button and box) for the page's `Buttons`."""
    preset = PRESETS[DEFAULT_PRESET]
    with gr.Column(elem_id="step-knobs"):
        temperature = knob(
            TEMPERATURE.field,
            preset.temperature,
            "0 = greedy (argmax); below 1 sharper, above 1 flatter; usual 0.7-1.0",
            elem_id="step-temperature",
        )
        top_k = knob(TOP_K.field, TOP_K.neutral, "keep the k likeliest; 0 = off; usual 20-100", elem_id="step-top-k")
        top_p = knob(
            TOP_P.field,
            TOP_P.neutral,
            "keep the smallest set with this much mass; 1 = off; usual 0.9-0.95",
            elem_id="step-top-p",
        )
        why = gr.Markdown(note, elem_id="step-why")
    try_this(quoting_steps(WALKTHROUGH, config), 5, "step-try", elem_classes="step-walk")
    # the lesson is the three knobs above; the rest waits here, for a preset or link that sets it, or the curious
    with gr.Accordion("More settings", open=False, elem_id="step-more") as more:
        run_n = run_n_row()
        min_p = knob(
            MIN_P.field,
            MIN_P.neutral,
            "drop tokens below min-p × the top probability; 0 = off; usual 0.05-0.1",
            elem_id="step-min-p",
        )
        advanced = advanced_controls()
        details = prompt_details(config, reads)
        linked = link_controls()
    penalties = {name: advanced.pop(name) for name in (REPETITION.field, PRESENCE.field, FREQUENCY.field)}
    knobs = Knobs(
        temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p, **penalties, order=advanced.pop("order")
    )
    return dict(knobs=knobs, why=why, more=more, run_n=run_n, **advanced, **details, **linked)


def advanced_controls() -> dict:
    """In "More settings": the penalties, seed, length, stop strings and the engine order."""
    return dict(
        repetition_penalty=knob(
            REPETITION.field,
            REPETITION.neutral,
            "divides the logits of tokens already seen; 1 = off; usual 1.1-1.3",
            elem_id="step-rep",
        ),
        presence_penalty=knob(
            PRESENCE.field, PRESENCE.neutral, "subtracts once from every token generated so far; 0 = off; usual 0-1"
        ),
        frequency_penalty=knob(
            FREQUENCY.field, FREQUENCY.neutral, "subtracts per repeat of a generated token; 0 = off; usual 0-1"
        ),
        seed=validate.whole_number_box(
            0, label="Seed", info=f"same seed and settings give the same tokens; 0 to {SEED_MAX:,}", elem_id="step-seed"
        ),
        max_new=validate.whole_number_box(
            PRESETS[DEFAULT_PRESET].max_new_tokens,
            label="Max new tokens",
            elem_id="step-max-new",
            info="stop after this many; 1-4096",
        ),
        stops=gr.Textbox(
            "",
            label="Stop strings",
            lines=2,
            info="one per line (\\n for a newline); the text stops before it; up to 16",
        ),
        order=gr.Radio(
            list(ORDERS),
            value="transformers",
            label="Engine order",
            info="the order the stages run in; it can change which tokens survive",
        ),
    )


def prompt_details(config: AppConfig, reads: Reads) -> dict:
    """The model, the prompt's format, and what the model reads (`reads` first: the default prompt's)."""
    model = gr.Dropdown(
        list(allowed_models()),
        value=config.model_id,
        label="Model",
        info="the bundled model works offline; others need the Hugging Face hub",
    )
    template = gr.Radio(
        [RAW, CHAT],
        value=PRESETS[DEFAULT_PRESET].template,
        label="Prompt format",
        info="raw: the text as typed; chat: wrapped in the model's chat template",
    )
    with gr.Accordion("What the model reads (exact text and tokens)", open=True, elem_id="step-reads"):
        text = gr.Textbox(reads.text, label="Exact text", lines=3, interactive=False, elem_id="step-templated")
        shown = Reads(text=text, chips=gr.HTML(reads.chips, elem_id="step-prompt-chips"))
    return dict(model=model, template=template, reads=shown)


# how a run's one-token passes run (decoding.passes.KINDS): "static" becomes "captured" where a CUDA graph can replay
# the step (decoding.static.static_kind)
PATH_CHOICES = [("eager", "eager"), ("static cache (captured on a GPU)", "static")]


def link_controls() -> dict:
    """How this session's passes run, and a link to this setup."""
    alone = gr.Checkbox(
        value=False,
        label="Run my steps alone",
        info="off: your steps share forward passes with everyone's (continuous batching); on: a pass of "
        "your own, bit-exact with generate()",
        elem_id="step-alone",
    )
    path = gr.Radio(
        PATH_CHOICES,
        value="eager",
        label="Decode step (from the next Prefill)",
        info="eager: a cache that grows by a token each step, in passes shared with the class; static: a cache sized "
        "for the whole run, passes of your own, and on a GPU the step replayed as a CUDA graph (the line under the "
        "chart says which ran)",
        elem_id="step-path",
    )
    copy = gr.Button("Copy a link to this setup", size="sm", elem_id="step-copy-link")
    link = gr.Textbox(label="Link", interactive=False, visible=True, elem_id="step-link", max_lines=2)
    return dict(alone=alone, path=path, copy=copy, link=link)
