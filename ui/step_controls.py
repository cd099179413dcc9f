"""The step tab's controls: the preset and prompt, and the sampler knobs with their ranges and usual values beside
them. Each knob's range is written once, in KNOBS: the slider is drawn with it and the handler checks it."""

from dataclasses import dataclass

import gradio as gr

from decoding.models import allowed_models
from decoding.pipeline import MIN_DIVISOR, ORDERS
from ui import validate
from ui.context import CHAT, RAW, AppConfig
from ui.step_lessons import DEFAULT_PRESET, PRESETS


@dataclass(frozen=True)
class KnobRange:
    label: str  # as on the page, so a message names the control the learner sees
    lo: float
    hi: float
    step: float
    allowed: str  # the range in words, for the message
    min_positive: float = 0.0  # values in (0, min_positive) are refused (a temperature of 1e-300 divides to inf)

    def ok(self, x: float) -> bool:
        return self.lo <= x <= self.hi and not 0 < x < self.min_positive


KNOBS = {
    "temperature": KnobRange("Temperature", 0, 3, 0.05, f"0 (greedy) or between {MIN_DIVISOR} and 3", MIN_DIVISOR),
    "top_p": KnobRange("Top-p", 0.01, 1, 0.01, "between 0.01 and 1 (1 = off)"),
    "min_p": KnobRange("Min-p", 0, 0.99, 0.01, "between 0 and 0.99 (0 = off)"),
    "repetition": KnobRange("Repetition penalty", 0.5, 2, 0.05, "between 0.5 and 2 (1 = off)"),
    "presence": KnobRange("Presence penalty", -2, 2, 0.1, "between -2 and 2 (0 = off)"),
    "frequency": KnobRange("Frequency penalty", -2, 2, 0.1, "between -2 and 2 (0 = off)"),
}
TOP_K_MAX = 200


def knob(name: str, value: float, info: str, **kwargs) -> gr.Slider:
    r = KNOBS[name]
    return validate.knob_slider(r.lo, r.hi, value, step=r.step, label=r.label, info=info, elem_classes="knob", **kwargs)


def lesson_controls():
    """The preset (one chosen, so the first screen starts the lesson) and the prompt, side by side."""
    p = PRESETS[DEFAULT_PRESET]
    preset = gr.Dropdown(list(PRESETS), value=DEFAULT_PRESET, label="Preset", scale=1, elem_id="step-preset")
    prompt = gr.Textbox(p.prompt, label="Prompt", lines=1, max_lines=4, scale=2, elem_id="step-prompt")
    return preset, prompt


def temperature_knob() -> gr.Slider:
    info = "0 = greedy (argmax); below 1 sharper, above 1 flatter; usual 0.7-1.0"
    return knob("temperature", PRESETS[DEFAULT_PRESET].temperature, info, elem_id="knob-temperature")


def truncation_knobs():
    info = "keep the k likeliest; 0 = off; usual 20-100"
    top_k = validate.knob_slider(0, TOP_K_MAX, 0, step=1, label="Top-k", info=info, elem_classes="knob")
    top_p = knob(
        "top_p", 1.0, "keep the smallest set with this much mass; 1 = off; usual 0.9-0.95", elem_id="knob-top-p"
    )
    min_p = knob(
        "min_p", 0.0, "drop tokens below min-p × the top probability; 0 = off; usual 0.05-0.1", elem_id="knob-min-p"
    )
    return top_k, top_p, min_p


def prompt_details(config: AppConfig):
    """The model, the prompt's format, and what the model reads (filled for the default prompt on load)."""
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
        templated = gr.Textbox(label="Exact text", lines=3, interactive=False, elem_id="step-templated")
        prompt_chips = gr.HTML(elem_id="step-prompt-chips")
    return model, template, templated, prompt_chips


def advanced_controls():
    """Under the fold: the penalties, seed, length, stop strings and the engine order."""
    with gr.Accordion("Penalties, seed, length, stop strings, engine order", open=False, elem_id="step-advanced"):
        repetition = knob(
            "repetition", 1.0, "divides the logits of tokens already seen; 1 = off; usual 1.1-1.3", elem_id="knob-rep"
        )
        presence = knob("presence", 0.0, "subtracts once from every token generated so far; 0 = off; usual 0-1")
        frequency = knob("frequency", 0.0, "subtracts per repeat of a generated token; 0 = off; usual 0-1")
        seed = validate.whole_number_box(
            0, label="Seed", info="same seed and settings give the same tokens; 0 to 2^32-1", elem_id="knob-seed"
        )
        max_new = validate.whole_number_box(
            PRESETS[DEFAULT_PRESET].max_new_tokens, label="Max new tokens", elem_id="knob-max-new",
            info="stop after this many; 1-4096",
        )  # fmt: skip
        stops = gr.Textbox(
            "",
            label="Stop strings",
            lines=2,
            info="one per line (\\n for a newline); the text stops before it; up to 16",
        )
        order = gr.Radio(
            list(ORDERS),
            value="transformers",
            label="Engine order",
            info="the order the stages run in; it can change which tokens survive",
        )
    return repetition, presence, frequency, seed, max_new, stops, order
