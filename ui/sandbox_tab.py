"""The "Sampler sandbox" tab: type logits (or pick a preset) and see what every sampler keeps, how
temperature changes what top-p and min-p keep, and where the engines' stage orders disagree.
No model runs here, so nothing goes through the model queue."""

import gradio as gr

from decoding import values
from decoding.pipeline import SamplerSettings
from decoding.sandbox import (
    FORMAT,
    MAX_VOCAB,
    PRESETS,
    compare_orders,
    each_strategy_alone,
    parse_logits,
    temperature_sweep,
)
from ui.events import teach
from ui.strategy_code import code_view
from visuals.sandbox import describe_sweep, orders_table, sweep_figure
from visuals.strategies import strategies_figure

TRY_THIS = """**Try this** (no model here: these are logits you type, one per token of a made-up vocabulary)
1. The **reference exercise** is loaded: logits 10, 9.9, 9.8, 5, 4 and 31,995 more at 0. Before you look: how many
   tokens does top-p 0.9 keep? Now read the **top-p** panel's title, and its **rest** bar.
2. Compare the **min-p** panel: its floor is 10% of the top token's probability, so it keeps only the top three.
3. In the logits box change `31995` to `95` and press Enter: with a short tail, top-p keeps 3 as well.
4. Pick the exercise again and read the **sweep**: as temperature rises, top-p's count climbs; min-p's stays small.
5. Pick **two-way tie**, temperature 1.5: the **engine orders** table shows transformers and vLLM keep different
   tokens.
"""
REFERENCE = """**What the references say.** "Top-p degrades silently at high temperatures. As temperature increases,
token probabilities become more uniform, so top-p admits increasingly many low-quality tokens. Min-p adapts its
threshold to the top token's probability, fixing this." One of them poses the exercise: top five logits
[10, 9.9, 9.8, 5, 4], the rest of 32,000 "around 0" (here exactly 0): "predict what top_p(logits, p=0.9) keeps.
Verify by running it."
"""
PANELS_NOTE = """Each panel applies **one** strategy to the same logits (temperature 1 for the truncations). Bars: the
model's probability of the 20 most likely tokens, then **rest** = every other token together; hatched and pale =
removed; the grey dash = the probability that strategy alone would sample it with. *(usual value)* = your setting is
off, so the panel shows the common value."""
DEFAULTS = {"preset": "reference exercise", "temperature": 1.0, "top_k": 0, "top_p": 0.9, "min_p": 0.1}
KNOBS = ("temperature", "top_k", "top_p", "min_p")


@teach
def sandbox_view(text: str, temperature, top_k, top_p, min_p):
    """Logits text and settings -> (strategies figure, sweep figure, sweep sentence, orders table)."""
    try:
        logits = parse_logits(text)
    except ValueError as err:
        raise ValueError(f"logits: {err}".replace("`", '"')) from None
    settings = SamplerSettings(
        temperature=values.number("temperature", temperature, 0.0, 5.0, "between 0 (greedy) and 5"),
        top_k=values.whole("top-k", top_k, 0, MAX_VOCAB, "0 = off"),
        top_p=values.number("top-p", top_p, 0.01, 1.0, "between 0.01 and 1 (1 = off)"),
        min_p=values.number("min-p", min_p, 0.0, 0.99, "between 0 (off) and 0.99"),
    )
    sweep = temperature_sweep(logits)
    comparison = compare_orders(logits, settings)
    return (
        strategies_figure(each_strategy_alone(logits, settings)),
        sweep_figure(sweep),
        f"**Measured here.** {describe_sweep(sweep)}",
        orders_table(comparison),
    )


def build(config) -> None:
    """Lay out the sandbox tab (inside the caller's gr.Tab) and wire its events. `config` is unused: no model."""
    first = sandbox_view(PRESETS[DEFAULTS["preset"]], *(DEFAULTS[n] for n in KNOBS))
    gr.Markdown(TRY_THIS)
    with gr.Row(equal_height=True):
        logits = gr.Textbox(
            PRESETS[DEFAULTS["preset"]],
            label="Logits, one per token (press Enter to apply)",
            info=f"{FORMAT}; 2 to {MAX_VOCAB:,} tokens",
            lines=1,
            max_lines=3,
            scale=3,
            elem_id="sandbox-logits",
        )
        preset = gr.Dropdown(
            list(PRESETS),
            value=DEFAULTS["preset"],
            label="Preset",
            info="confident, flat, a tie, or the reference exercise",
            scale=1,
            elem_id="sandbox-preset",
        )
    with gr.Row():  # four abreast on a wide screen, two by two at 800 px (min_width)
        temperature = gr.Slider(
            0, 3, DEFAULTS["temperature"], step=0.05, label="temperature", elem_id="sandbox-temperature", min_width=260,
            info="divides the logits: < 1 sharpens, > 1 flattens; 0 = greedy. Usual 0.7–1",
        )  # fmt: skip
        top_k = gr.Slider(
            0, 200, DEFAULTS["top_k"], step=1, label="top-k", elem_id="sandbox-topk", min_width=260,
            info="keep the k most likely (ties kept); 0 = off. Usual 40–50",
        )  # fmt: skip
        top_p = gr.Slider(
            0.01, 1, DEFAULTS["top_p"], step=0.01, label="top-p", elem_id="sandbox-topp", min_width=260,
            info="keep the most likely until their mass reaches p; 1 = off. Usual 0.9–0.95",
        )  # fmt: skip
        min_p = gr.Slider(
            0, 0.99, DEFAULTS["min_p"], step=0.01, label="min-p", elem_id="sandbox-minp", min_width=260,
            info="keep tokens with p ≥ min-p × the top p; 0 = off. Usual 0.05–0.1",
        )  # fmt: skip
    strategies = gr.Plot(first[0], label="Same logits, each strategy alone", elem_id="sandbox-strategies")
    gr.Markdown(PANELS_NOTE, elem_classes="hint")
    code_view()
    gr.Markdown("### Temperature sweep: top-p 0.9 vs min-p 0.1\n" + REFERENCE)
    measured = gr.Markdown(first[2], elem_id="sandbox-measured")
    sweep = gr.Plot(first[1], show_label=False, elem_id="sandbox-sweep")
    gr.Markdown("### Engine orders: the same settings, each engine's stage order")
    orders = gr.HTML(first[3], elem_id="sandbox-orders")

    knobs = [temperature, top_k, top_p, min_p]
    outputs = [strategies, sweep, measured, orders]
    preset.input(lambda name: PRESETS[name], preset, logits, show_progress="hidden").then(
        sandbox_view, [logits, *knobs], outputs, show_progress="hidden"
    )
    # typed logits that match no preset leave the picker empty, so any preset can be picked again
    logits.submit(lambda text: next((n for n, t in PRESETS.items() if t == text.strip()), None), logits, preset)
    gr.on(
        [logits.submit, logits.blur, *(k.change for k in knobs)],
        sandbox_view,
        [logits, *knobs],
        outputs,
        show_progress="hidden",
    )
