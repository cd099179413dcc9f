"""The "Repetition loops" section of the beam search tab: the same prompt decoded with greedy, sampling and
each penalty, and how much of every text repeats itself, measured on the loaded model."""

from dataclasses import dataclass
from typing import NamedTuple

import gradio as gr

from decoding import values
from decoding.beams.repetition import (
    DEFAULT_SETTINGS,
    DEFAULT_TOKENS,
    SEEDS_RANGE,
    SETTINGS,
    TOKENS_RANGE,
    run_repetition_experiment,
)
from decoding.knobs import check_seed
from ui.context import AppConfig, get_model, model_turn, pass_turn
from ui.events import FOLLOWS, PROGRESS, CancelFlags, message_line, model_event
from ui.lesson import style, try_this
from ui.validate import knob_slider, whole_number_box
from visuals.beams.repetition import CSS, findings_markdown, repetition_figure, texts_html
from visuals.beams.repetition_captions import headline
from visuals.glossary import term
from visuals.theme import empty_figure

INTRO = """## Repetition loops
Greedy decoding takes the most likely token every time. Once a phrase has been written, writing it again is often
the most likely continuation, so greedy output can fall into a loop. Sampling and the penalties break loops; a large
repetition penalty also forbids words that *should* repeat. Here the same prompt is decoded with each setting (same
seed for all) and the repetition is measured: the **share of repeated n-grams** (of all n-token windows, the share
that had already appeared earlier in the text) and the **loop start** (the first token where a span of 4 or more
tokens is followed at once by itself)."""
TRY_THIS = """1. Press **Run** with the defaults (about 15 seconds on a CPU; the progress bar counts the tokens).
2. In the chart, compare **greedy** with **temperature 1.0** and **top-p 0.9**: which repeats more, and where does
   greedy's loop start? Find the ⟳ marker in greedy's text below.
3. Compare the penalties: does **repetition 1.3** or **presence 1.0** stop greedy's loop?
4. Pick the preset **a story about Mia and Max**, tick only **greedy** and **repetition 2.0**, and Run: each card
   counts the two names. The names are in the prompt, so a repetition penalty punishes them from the first token:
   does **repetition 2.0** still use them?
5. Tick only **temperature 1.0** and **top-p 0.9**, set **seeds** to 3 and Run: the sampled bars become the mean of
   three runs, with whiskers from the lowest to the highest.
"""


class Preset(NamedTuple):
    message: str
    words: str  # that should repeat, comma-separated


PRESETS = {
    "a poem about the sea": Preset("Write a poem about the sea.", ""),
    "a city at night": Preset("Describe a city at night.", ""),
    "a song about friendship": Preset("Write a song about friendship.", ""),
    "a story about Mia and Max": Preset("Write a short story about a girl named Mia and her dog Max.", "Mia, Max"),
}
DEFAULT_PRESET = "a song about friendship"  # greedy loops from token 50 on the bundled model, every 17 tokens
CANCEL = CancelFlags()
# the controls the Run button reads, named as on the panel and as run_settings' arguments
RUN_INPUTS = ("prompt", "chat", "words", "keys", "tokens", "n_seeds", "seed")


class RepetitionView(NamedTuple):
    """What a run shows; the panel holds one of its components, so the handler's outputs go by name."""

    summary: str
    chart: object
    findings: str
    texts: str


@dataclass(frozen=True)
class RepetitionPanel:
    preset: gr.Dropdown
    chat: gr.Checkbox
    prompt: gr.Textbox
    words: gr.Textbox
    keys: gr.CheckboxGroup
    tokens: gr.Slider
    n_seeds: gr.Slider
    seed: gr.Number
    run_btn: gr.Button
    cancel_btn: gr.Button
    message: gr.HTML
    view: RepetitionView  # of components


def parse_words(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in (text or "").split(",") if w.strip())


def layout(config: AppConfig) -> RepetitionPanel:
    """The panel's components, below the beam search in the caller's gr.Tab. `config` is unused at layout."""
    style(CSS, "repetition-css")
    gr.Markdown(INTRO)
    try_this(TRY_THIS, 5, "repetition-try")
    with gr.Row():
        preset = gr.Dropdown(
            list(PRESETS), value=DEFAULT_PRESET, label="Prompt preset", scale=2, elem_id="repetition-preset"
        )
        chat = gr.Checkbox(True, label="wrap in the chat template", scale=1)
    first = PRESETS[DEFAULT_PRESET]
    prompt = gr.Textbox(first.message, label="Prompt (open-ended prompts loop more)", lines=2)
    words = gr.Textbox(
        first.words,
        label="Words the text should repeat (comma-separated, optional)",
        placeholder="e.g. Mia, Max: each card counts them",
        elem_id="repetition-words",
    )
    keys = gr.CheckboxGroup(
        [(s.label, k) for k, s in SETTINGS.items()],
        value=list(DEFAULT_SETTINGS),
        label="Settings (the penalties run on greedy: T = 0)",
        elem_id="repetition-settings",
    )
    with gr.Row():  # knob sliders: a typed value out of range reaches the handler's check, which names the control
        tokens = knob_slider(
            *TOKENS_RANGE, value=DEFAULT_TOKENS, step=10, label="Tokens per setting", elem_id="repetition-tokens"
        )
        n_seeds = knob_slider(
            *SEEDS_RANGE, value=1, step=1, label="Seeds per sampled setting", elem_id="repetition-seeds"
        )
        seed = whole_number_box(0, label="First seed")
    gr.Markdown(
        "Stops only at the end-of-sequence token or the token limit. The settings run side by side, one shared "
        f"(packed) {term('forward pass')} a token for all of them, so a token can differ from a run alone by float "
        "noise (the Temperature 0 & batching tab shows why; on the defaults, on a CPU, none did). "
        f"{len(DEFAULT_SETTINGS)} settings × {DEFAULT_TOKENS} tokens take about 15 s on two CPU cores, a third of "
        "running them one after the other; each extra seed adds one run per sampled setting.",
        elem_classes=["hint"],
    )
    with gr.Row():
        run_btn = gr.Button("Run", variant="primary", elem_id="repetition-run")
        cancel_btn = gr.Button("Cancel", variant="stop")
    message = message_line("repetition-message")
    summary = gr.Markdown("*No run yet: press **Run**.*", elem_id="repetition-summary")
    chart = gr.Plot(
        value=empty_figure("Press Run to measure each setting's repetition"),
        show_label=False,
        elem_id="repetition-chart",
    )
    findings = gr.Markdown(elem_id="repetition-findings")
    texts = gr.HTML(texts_html([]), elem_id="repetition-texts")
    return RepetitionPanel(
        preset=preset,
        chat=chat,
        prompt=prompt,
        words=words,
        keys=keys,
        tokens=tokens,
        n_seeds=n_seeds,
        seed=seed,
        run_btn=run_btn,
        cancel_btn=cancel_btn,
        message=message,
        view=RepetitionView(summary=summary, chart=chart, findings=findings, texts=texts),
    )


def wire(c: RepetitionPanel, config: AppConfig) -> None:
    def run(given: dict, progress=PROGRESS, request: gr.Request = None) -> dict:
        asked = {name: given[getattr(c, name)] for name in RUN_INPUTS}
        return dict(zip(c.view, run_settings(config, **asked, progress=progress, request=request)))

    def apply_preset(name) -> dict:
        return {c.prompt: PRESETS[name].message, c.words: PRESETS[name].words}

    c.preset.input(apply_preset, inputs=c.preset, outputs=[c.prompt, c.words], show_progress="hidden", **FOLLOWS)
    inputs = {getattr(c, name) for name in RUN_INPUTS}
    model_event(c.run_btn.click, run, inputs, list(c.view), message=c.message)
    CANCEL.wire(c.cancel_btn)


def build(config: AppConfig) -> None:
    wire(layout(config), config)


def run_settings(
    config: AppConfig, prompt, chat, words, keys, tokens, n_seeds, seed, progress, request
) -> RepetitionView:
    """Run button: every ticked setting decoded and measured, then the headline, chart, findings and texts."""
    keys = values.picked("Settings", keys, SETTINGS)
    tokens = values.whole("Tokens per setting", tokens, *TOKENS_RANGE)
    n_seeds = values.whole("Seeds per sampled setting", n_seeds, *SEEDS_RANGE)
    seed = check_seed(seed, "First seed")
    lm, must_repeat = get_model(config), parse_words(words)
    watch = CANCEL.watch(request, progress, between_passes=pass_turn(lm))
    with model_turn(lm, "the repetition runs"):
        exp = run_repetition_experiment(
            lm,
            prompt,
            keys,
            max_new_tokens=tokens,
            seed=seed,
            n_seeds=n_seeds,
            chat=chat,
            must_repeat=must_repeat,
            watch=watch,
        )
    if exp.cancelled:
        gr.Warning(f"Cancelled after {exp.seconds:.0f} s: every setting's tokens so far are shown.")
    rows = exp.summaries()
    title = f"Repeated n-grams per setting · {lm.label} · {tokens} tokens"
    return RepetitionView(
        summary=headline(exp, f"{lm.label}, {lm.device}"),
        chart=repetition_figure(rows, title),
        findings=findings_markdown(rows, must_repeat),
        texts=texts_html(rows),
    )
