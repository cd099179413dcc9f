"""The quantization tab's two measurements: each format timed on this device (holding the model alone, with
progress and Cancel), and each format's quality on the held-out text (kept per process per format and length)."""

from dataclasses import dataclass
from typing import Any, NamedTuple

import gradio as gr

from decoding import values
from decoding.quantization.copies import COPIES
from decoding.quantization.measured import heldout_length, quality_row, speed_rows
from decoding.timing.limits import device_name
from decoding.watch import Cancelled
from ui.context import AppConfig, model_turn
from ui.events import PROGRESS, CancelFlags, message_line, model_event
from ui.quantization_handlers import CHOICES, reference_model
from ui.validate import whole_number_box
from visuals import quantization_measured as draw

PREFILL_TOKENS, DECODE_TOKENS, REPEATS = 256, 8, 3
TOKENS_DEFAULT, TOKENS_LABEL = 256, "Held-out tokens to score"
CANCEL = CancelFlags()
MEASURED_FIRST = [name for name in ("int8", "int8-activations") if name in CHOICES]  # the lesson's pair


class Speed(NamedTuple):
    figure: Any
    table: Any
    said: Any  # which of decode and prefill gained, from the numbers


@dataclass(frozen=True)
class MeasurePage:
    formats: gr.CheckboxGroup
    measure: gr.Button
    cancel: gr.Button
    speed: Speed  # of components
    tokens: gr.Number
    score: gr.Button
    quality: gr.Markdown
    message: gr.HTML


def layout() -> MeasurePage:
    gr.Markdown(
        "### Measured on this device\nEach format's weight bytes per decode step, a prefill of "
        f"{PREFILL_TOKENS} tokens and decode ms/token, timed in turns (float32, int8, ... float32, int8, ...) with "
        f"the model held alone. A **simulated** format does float32's work on float32's bytes: no speed-up claimed."
    )
    with gr.Row():
        # two by default: each ticked format is a ~540 MB copy while the model is held alone from the class
        formats = gr.CheckboxGroup(CHOICES, value=MEASURED_FIRST, label="Formats (float32 is always measured)", scale=4)
        measure = gr.Button("Measure", variant="primary", scale=1, min_width=110, elem_id="q-measure")
        cancel = gr.Button("Cancel", variant="stop", scale=1, min_width=100, elem_id="q-cancel")
    message = message_line("q-measure-message")
    with gr.Row():
        figure = gr.Plot(draw.speed_figure([], ""), show_label=False, elem_id="q-speed", scale=1)
        said = gr.Markdown(elem_id="q-gained")
    table = gr.Markdown(elem_id="q-speed-table")
    gr.Markdown(
        "### Quality on the held-out text\nPerplexity, mean KL against float32 and top-1 agreement over every "
        "position of a text written for the project (no model has seen it), in windows of 512 tokens."
    )
    with gr.Row():
        tokens = whole_number_box(TOKENS_DEFAULT, label=TOKENS_LABEL, scale=2, elem_id="q-tokens")
        score = gr.Button("Score", variant="primary", scale=1, min_width=110, elem_id="q-score")
    quality = gr.Markdown(draw.llama_cpp_note(), elem_id="q-quality")
    return MeasurePage(formats, measure, cancel, Speed(figure, table, said), tokens, score, quality, message)


def measure(config: AppConfig, formats, progress=PROGRESS, request: gr.Request = None) -> Speed:
    names = _formats(formats)
    lm = reference_model(config)
    try:
        with model_turn(lm, "a quantization measurement", exclusive=True):
            rows = speed_rows(lm, names, PREFILL_TOKENS, DECODE_TOKENS, REPEATS, CANCEL.watch(request, progress))
    except Cancelled:
        raise ValueError("measurement cancelled: press Measure to start again") from None
    label = device_name(lm.device)
    return Speed(draw.speed_figure(rows, label), draw.speed_table(rows), draw.gained(rows, PREFILL_TOKENS))


def score(config: AppConfig, formats, tokens, progress=PROGRESS) -> str:
    lm = reference_model(config)
    longest = heldout_length(lm)
    n = values.whole(TOKENS_LABEL, tokens, 2, longest, f"the held-out text has {longest:,} tokens")
    names = ["float32", *_formats(formats)]
    rows = []
    for i, name in enumerate(names):
        progress(i / len(names), desc=f"scoring {name}")
        with model_turn(lm, "the quantization quality table"):
            rows.append(quality_row(lm, name, n, COPIES))
    head = f"Over the first {n:,} tokens of the held-out text ({rows[0]['positions']:,} predicted positions):\n\n"
    return head + draw.quality_table(rows) + "\n\n" + draw.llama_cpp_note()


def _formats(formats) -> list[str]:
    return values.picked("Formats", formats, CHOICES)


def wire(c: MeasurePage, config: AppConfig) -> None:
    def run(formats, progress=PROGRESS, request: gr.Request = None) -> dict:
        return dict(zip(c.speed, measure(config, formats, progress, request), strict=True))

    def scored(formats, tokens, progress=PROGRESS) -> dict:
        return {c.quality: score(config, formats, tokens, progress)}

    model_event(c.measure.click, run, c.formats, list(c.speed), message=c.message, gpu_s=300)
    model_event(c.score.click, scored, [c.formats, c.tokens], [c.quality], message=c.message, gpu_s=300)
    CANCEL.wire(c.cancel)
