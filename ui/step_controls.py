"""The step tab's controls: the prompt, and the sampler knobs with their ranges and usual values beside them."""

import gradio as gr

from decoding.models import allowed_models
from decoding.pipeline import ORDERS
from ui import validate
from ui.context import CHAT, RAW, AppConfig
from ui.step_lessons import PRESETS


def prompt_controls(config: AppConfig):
    """The model, preset, prompt and its format, and what the model reads."""
    model = gr.Dropdown(
        list(allowed_models()),
        value=config.model_id,
        label="Model",
        info="the bundled model works offline; others need the Hugging Face hub",
    )
    preset = gr.Dropdown(list(PRESETS), value=None, label="Preset", info="each one teaches one thing")
    preset_note = gr.Markdown()
    prompt = gr.Textbox("The capital of France is", label="Prompt", lines=2, elem_id="step-prompt")
    template = gr.Radio(
        [RAW, CHAT],
        value=RAW,
        label="Prompt format",
        info="raw: the text as typed; chat: wrapped in the model's chat template",
    )
    with gr.Accordion("What the model reads (exact text and tokens)", open=False):
        templated = gr.Textbox(label="Exact text", lines=3, interactive=False)
        prompt_chips = gr.HTML()
    return model, preset, preset_note, prompt, template, templated, prompt_chips


def sampler_controls():
    """The knobs in `settings_from` order (the engine order last), then seed, max new tokens and stop strings."""
    temperature = gr.Slider(
        0,
        3,
        1.0,
        step=0.05,
        label="Temperature",
        elem_id="knob-temperature",
        info="0 = greedy (argmax); below 1 sharper, above 1 flatter; usual 0.7-1.0",
    )
    top_k = gr.Slider(0, 200, 0, step=1, label="Top-k", info="keep the k likeliest; 0 = off; usual 20-100")
    top_p = gr.Slider(
        0.01,
        1,
        1.0,
        step=0.01,
        label="Top-p",
        info="keep the smallest set with this much mass; 1 = off; usual 0.9-0.95",
    )
    min_p = gr.Slider(
        0,
        1,
        0.0,
        step=0.01,
        label="Min-p",
        info="drop tokens below min-p × the top probability; 0 = off; usual 0.05-0.1",
    )
    with gr.Accordion("Penalties, seed, length, stop strings, engine order", open=False):
        repetition, presence, frequency, seed, max_new, stops, order = _advanced_controls()
    return [temperature, top_k, top_p, min_p, repetition, presence, frequency, order], seed, max_new, stops


def _advanced_controls():
    """Under the fold: the penalties, seed, length, stop strings and the engine order."""
    repetition = gr.Slider(
        0.5,
        2,
        1.0,
        step=0.05,
        label="Repetition penalty",
        info="divides the logits of tokens already seen; 1 = off; usual 1.1-1.3",
    )
    presence = gr.Slider(
        -2,
        2,
        0.0,
        step=0.1,
        label="Presence penalty",
        info="subtracts once from every token generated so far; 0 = off; usual 0-1",
    )
    frequency = gr.Slider(
        -2,
        2,
        0.0,
        step=0.1,
        label="Frequency penalty",
        info="subtracts per repeat of a generated token; 0 = off; usual 0-1",
    )
    seed = validate.whole_number_box(0, label="Seed", info="same seed and settings give the same tokens; 0 to 2^32-1")
    max_new = validate.whole_number_box(
        48, label="Max new tokens", elem_id="knob-max-new", info="stop after this many; 1-4096"
    )
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
