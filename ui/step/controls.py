"""The step tab's controls: the preset and prompt, and the sampler knobs with their ranges and usual values beside
them. Each knob's range is written once, in decoding.knobs: the slider is drawn with it and the handler checks it."""

import gradio as gr

from decoding.knobs import KNOBS, SEED_MAX
from decoding.models import allowed_models
from decoding.pipeline import ORDERS
from ui import validate
from ui.context import CHAT, RAW, AppConfig
from ui.step.lessons import DEFAULT_PRESET, PRESETS

# the step tab's names for its sliders -> the knobs they set (ranges, labels and "off" values: decoding.knobs)
FIELDS = {
    "temperature": "temperature",
    "top_k": "top_k",
    "top_p": "top_p",
    "min_p": "min_p",
    "repetition": "repetition_penalty",
    "presence": "presence_penalty",
    "frequency": "frequency_penalty",
}


def knob(name: str, value: float, info: str, **kwargs) -> gr.Slider:
    r = KNOBS[FIELDS[name]]
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
    top_k = knob("top_k", 0, info)
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
            0, label="Seed", info=f"same seed and settings give the same tokens; 0 to {SEED_MAX:,}", elem_id="knob-seed"
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
