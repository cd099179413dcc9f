"""The "Repetition loops" section of the beam search tab: the same prompt decoded with greedy, sampling and
each penalty, and how much of every text repeats itself, measured on the loaded model."""

import gradio as gr

from decoding import values
from decoding.beams.repetition import DEFAULT_SETTINGS, SEEDS_RANGE, SETTINGS, TOKENS_RANGE, run_repetition_experiment
from ui import validate
from ui.context import AppConfig, get_model, model_turn, pass_turn
from ui.events import PROGRESS, CancelFlags, model_event
from visuals.repetition import CSS, findings_markdown, repetition_figure, texts_html
from visuals.repetition_captions import headline
from visuals.theme import empty_figure

INTRO = """## Repetition loops
Greedy decoding takes the most likely token every time. Once a phrase has been written, writing it again is often
the most likely continuation, so greedy output can fall into a loop. Sampling and the penalties break loops; a large
repetition penalty also forbids words that *should* repeat. Here the same prompt is decoded with each setting (same
seed for all) and the repetition is measured: the **share of repeated n-grams** (of all n-token windows, the share
that had already appeared earlier in the text) and the **loop start** (the first token where a span of 4 or more
tokens is followed at once by itself)."""
TRY_THIS = """1. Press **Run** with the defaults (about a minute on a CPU; the progress bar names each setting).
2. In the chart, compare **greedy** with **temperature 1.0** and **top-p 0.9**: which repeats more, and where does
   greedy's loop start? Find the ⟳ marker in greedy's text below.
3. Compare the penalties: does **repetition 1.3** or **presence 1.0** stop greedy's loop?
4. Pick the preset **a story about Mia and Max**, tick only **greedy** and **repetition 2.0**, and Run: each card
   counts the two names. The names are in the prompt, so a repetition penalty punishes them from the first token:
   does **repetition 2.0** still use them?
5. Tick only **temperature 1.0** and **top-p 0.9**, set **seeds** to 3 and Run: the sampled bars become the mean of
   three runs, with whiskers from the lowest to the highest.
"""
PRESETS = {  # name: (message, words that should repeat)
    "a poem about the sea": ("Write a poem about the sea.", ""),
    "a city at night": ("Describe a city at night.", ""),
    "a song about friendship": ("Write a song about friendship.", ""),
    "a story about Mia and Max": ("Write a short story about a girl named Mia and her dog Max.", "Mia, Max"),
}
DEFAULT_PRESET = "a song about friendship"  # greedy loops from about token 50 on the bundled model
DEFAULT_TOKENS = 150  # six settings × 150 tokens ≈ a minute at ~20 tokens/s (two CPU cores)
MAX_SEED = 2**31 - 1
CANCEL = CancelFlags()


def parse_words(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in (text or "").split(",") if w.strip())


def build(config: AppConfig) -> None:
    gr.HTML(f"<style>{CSS}</style>")
    gr.Markdown(INTRO)
    with gr.Accordion("Try this (five steps)", open=True):
        gr.Markdown(TRY_THIS)
    with gr.Row():
        preset = gr.Dropdown(list(PRESETS), value=DEFAULT_PRESET, label="Prompt preset", scale=2, elem_id="rep-preset")
        chat = gr.Checkbox(True, label="wrap in the chat template", scale=1)
    message = gr.Textbox(PRESETS[DEFAULT_PRESET][0], label="Prompt (open-ended prompts loop more)", lines=2)
    words = gr.Textbox(PRESETS[DEFAULT_PRESET][1], label="Words the text should repeat (comma-separated, optional)",
                       placeholder="e.g. Mia, Max: each card counts them", elem_id="rep-words")  # fmt: skip
    keys = gr.CheckboxGroup([(s.label, k) for k, s in SETTINGS.items()], value=list(DEFAULT_SETTINGS),
                            label="Settings (the penalties run on greedy: T = 0)", elem_id="rep-settings")  # fmt: skip
    with gr.Row():
        tokens = gr.Slider(*TOKENS_RANGE, value=DEFAULT_TOKENS, step=10, label="Tokens per setting")
        n_seeds = gr.Slider(*SEEDS_RANGE, value=1, step=1, label="Seeds per sampled setting", elem_id="rep-seeds")
        seed = validate.whole_number_box(0, label="First seed")
    gr.Markdown(
        "Stops only at the end-of-sequence token or the token limit. Six settings × 150 tokens take about a minute "
        "on two CPU cores; each extra seed adds one run per sampled setting.",
        elem_classes=["hint"],
    )
    with gr.Row():
        run_btn = gr.Button("Run", variant="primary", elem_id="rep-run")
        cancel_btn = gr.Button("Cancel", variant="stop")
    summary = gr.Markdown("*No run yet: press **Run**.*", elem_id="rep-summary")
    chart = gr.Plot(
        value=empty_figure("Press Run to measure each setting's repetition"), show_label=False, elem_id="rep-chart"
    )
    findings = gr.Markdown(elem_id="rep-findings")
    texts = gr.HTML(texts_html([]), elem_id="rep-texts")

    def run(message, chat, words_text, keys, tokens, n_seeds, seed, progress=PROGRESS, request: gr.Request = None):
        return run_settings(config, message, chat, words_text, keys, tokens, n_seeds, seed, progress, request)

    preset.input(lambda name: PRESETS[name], inputs=preset, outputs=[message, words], show_progress="hidden")
    inputs = [message, chat, words, keys, tokens, n_seeds, seed]
    model_event(run_btn.click, run, inputs, [summary, chart, findings, texts], gpu_s=180)
    CANCEL.wire(cancel_btn)


def run_settings(config: AppConfig, message, chat, words_text, keys, tokens, n_seeds, seed, progress, request):
    """Run button: every ticked setting decoded and measured, then the headline, chart, findings and texts."""
    keys = values.picked("settings", keys, SETTINGS)
    tokens = values.whole("tokens per setting", tokens, *TOKENS_RANGE)
    n_seeds = values.whole("seeds", n_seeds, *SEEDS_RANGE)
    seed = values.whole("first seed", seed, 0, MAX_SEED)
    lm, words = get_model(config), parse_words(words_text)
    watch = CANCEL.watch(request, progress, between_passes=pass_turn(lm))
    with model_turn(lm, "the repetition runs"):
        exp = run_repetition_experiment(lm, message, keys, max_new_tokens=tokens, seed=seed, n_seeds=n_seeds,
                                        chat=chat, must_repeat=words, watch=watch)  # fmt: skip
    if exp.cancelled:
        gr.Warning(f"Cancelled after {exp.seconds:.0f} s: the settings that finished are shown.")
    rows = exp.summaries()
    title = f"Repeated n-grams per setting · {lm.label} · {tokens} tokens"
    return (headline(exp, f"{lm.label}, {lm.device}"), repetition_figure(rows, title), findings_markdown(rows, words),
            texts_html(rows))  # fmt: skip
