"""The quantization tab's two measurements: each format timed on this device (holding the model alone, with
progress and Cancel), and each format's quality on the held-out text, per part it rounds (kept per process per
format, part and length), with its own formats, message line and Cancel beside its button."""

from dataclasses import dataclass
from typing import Any, NamedTuple

import gradio as gr

from decoding import values
from decoding.quantization.copies import COPIES
from decoding.quantization.formats import AS_STORED, BOTH, PARTS
from decoding.quantization.measured import heldout_length, quality_row, speed_rows
from decoding.timing import machine as machines
from decoding.timing.limits import device_name
from decoding.watch import Cancelled
from ui import gpu
from ui.context import AppConfig, get_model
from ui.events import PROGRESS, CancelFlags, message_line, model_event
from ui.quantization.handlers import choices, reference_config, reference_model
from ui.validate import whole_number_box
from visuals.glossary import term
from visuals.quantization import measured as draw

PREFILL_TOKENS, DECODE_TOKENS, REPEATS = 256, 8, 3
GPU_SECONDS = 300  # ZeroGPU's estimate for Measure or Score: each format is a fresh copy of the model
TOKENS_DEFAULT, TOKENS_LABEL = 256, "Held-out tokens to score"
SCORE_FORMATS, SCORE_PARTS = "Formats to score", "Rounded"
CANCEL, SCORE_CANCEL = CancelFlags(), CancelFlags()  # Measure's (and the kernels'), and Score's own
MEASURED_FIRST = ["int8", "int8-activations"]  # the lesson's pair
SCORED_FIRST = [AS_STORED, "int4"]  # the lesson's point: as stored is float32; int4's drift is the head's


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
    message: gr.HTML
    score_formats: gr.CheckboxGroup
    parts: gr.CheckboxGroup
    tokens: gr.Number
    score: gr.Button
    score_cancel: gr.Button
    score_message: gr.HTML
    quality: gr.Markdown


def layout(model_id: str) -> MeasurePage:
    offered = choices(model_id)
    gr.Markdown(
        "### Measured on this device\nEach format's weight bytes per decode step, a prefill of "
        f"{PREFILL_TOKENS} tokens and decode ms/token, timed in turns (float32, int8, ... float32, int8, ...) with "
        f"the model held alone. A **{term('simulated')}** format stores fewer bytes but reads float32's here and "
        "does float32's work: no speed-up is claimed for it."
    )
    with gr.Row():
        # two by default: each ticked format is a ~540 MB copy while the model is held alone from the class
        first = [name for name in MEASURED_FIRST if name in offered]
        formats = gr.CheckboxGroup(
            offered,
            value=first,
            label="Formats to time (float32 always is)",
            scale=4,
            elem_id="quantization-time-formats",
        )
        measure = gr.Button("Measure", variant="primary", scale=1, min_width=110, elem_id="quantization-measure")
        cancel = gr.Button("Cancel", variant="stop", scale=1, min_width=100, elem_id="quantization-cancel")
    message = message_line("quantization-measure-message")
    with gr.Row():
        figure = gr.Plot(draw.speed_figure([], ""), show_label=False, elem_id="quantization-speed", scale=1)
        said = gr.Markdown(elem_id="quantization-gained")
    table = gr.Markdown(elem_id="quantization-speed-table")
    gr.Markdown(
        f"### Quality on the held-out text\n{term('perplexity', 'Perplexity')}, mean {term('KL')} against float32 and "
        f"{term('top-1')} agreement over every position of a text written for the project (no model has seen it), in "
        "windows of 512 tokens; each format applied to the layers and the LM head, or to one of them with the other "
        "kept float32."
    )
    with gr.Row(elem_id="quantization-score-row"):
        first = [name for name in SCORED_FIRST if name in offered]
        score_formats = gr.CheckboxGroup(
            offered, value=first, label=SCORE_FORMATS, scale=4, elem_id="quantization-score-formats"
        )
        parts = gr.CheckboxGroup(
            list(PARTS), value=list(PARTS), label=SCORE_PARTS, scale=3, elem_id="quantization-parts"
        )
    with gr.Row():
        tokens = whole_number_box(TOKENS_DEFAULT, label=TOKENS_LABEL, scale=2, elem_id="quantization-tokens")
        score = gr.Button("Score", variant="primary", scale=1, min_width=110, elem_id="quantization-score")
        score_cancel = gr.Button("Cancel", variant="stop", scale=1, min_width=100, elem_id="quantization-score-cancel")
    score_message = message_line(
        "quantization-score-message"
    )  # under Score: its errors are said where the person looks
    quality = gr.Markdown(draw.llama_cpp_note(), elem_id="quantization-quality")
    return MeasurePage(
        formats,
        measure,
        cancel,
        Speed(figure, table, said),
        message,
        score_formats,
        parts,
        tokens,
        score,
        score_cancel,
        score_message,
        quality,
    )


def timed(lm, names: list[str], watch) -> tuple[list[dict], str]:
    """Measure's measurement (ui.gpu: plain data in and out): each format's rows, and the device they ran on."""
    return speed_rows(lm, names, PREFILL_TOKENS, DECODE_TOKENS, REPEATS, watch), device_name(lm.device)


def scored_rows(lm, wanted: list[tuple[str, str]], n: int, watch) -> list[dict]:
    """Score's measurement: each (format, part)'s quality over the first `n` held-out tokens; cancelled between rows."""
    rows = []
    for i, (name, part) in enumerate(wanted):
        watch.check()
        watch.on_progress(i / len(wanted), f"scoring {name}" + ("" if part == BOTH else f", {part}"))
        rows.append(quality_row(lm, name, n, COPIES, part))
    return rows


def measure(config: AppConfig, formats, progress=PROGRESS, request: gr.Request = None) -> Speed:
    names = values.picked("Formats to time", formats, choices(config.model_id))
    job = gpu.Job(timed, (names,), reference_config(config), CANCEL.file_for(request), GPU_SECONDS)
    try:
        rows, label = gpu.run(config, job, progress, "a quantization measurement", exclusive=True)
    except Cancelled:
        raise ValueError(f"measurement cancelled{_after(CANCEL, request)}: press Measure to start again") from None
    said = draw.gained(rows, PREFILL_TOKENS) + "\n\n" + draw.streamed(rows, machine_gbs(config))
    return Speed(draw.speed_figure(rows, label), draw.speed_table(rows), said)


def _after(flags: CancelFlags, request) -> str:
    """How soon the work ended after Cancel reached the server, as the message says it (the server's own time)."""
    took = flags.since_pressed(request)
    return f", {took:.2f} s after you pressed Cancel" if took is not None else ""


def machine_gbs(config: AppConfig) -> float | None:
    """This machine's copy bandwidth as the server keeps it (the Prefill vs decode tab and its regime map probe it):
    float32's figure, else the app's dtype's (a copy moves bytes, whatever their type); None: not measured yet."""
    lm = get_model(config)
    where = gpu.measured_where(lm)
    for dtype in ("float32", lm.dtype_name):
        figure = machines.MACHINE.get(where, dtype)
        if figure is not None:
            return figure.bandwidth_gbs
    return None


def score(config: AppConfig, formats, parts, tokens, progress=PROGRESS, request: gr.Request = None) -> str:
    """The quality table of each ticked format on each ticked part, float32's row first; cancelled between rows."""
    cancel_file = SCORE_CANCEL.file_for(request)  # first: a Cancel pressed while the reference loads stops it too
    longest = heldout_length(reference_model(config))  # the tokenizer's count: the same on every device
    n = values.whole(TOKENS_LABEL, tokens, 2, longest, f"the held-out text has {longest:,} tokens")
    if not formats or not parts:
        return draw.nothing_to_score(SCORE_FORMATS, SCORE_PARTS) + "\n\n" + draw.llama_cpp_note()
    names = values.picked(SCORE_FORMATS, formats, choices(config.model_id))
    picked = values.picked(SCORE_PARTS, parts, PARTS)
    wanted = [("float32", BOTH)] + [(name, part) for name in names for part in PARTS if part in picked]
    job = gpu.Job(scored_rows, (wanted, n), reference_config(config), cancel_file, GPU_SECONDS)
    try:
        rows = gpu.run(config, job, progress, "the quantization quality table")
    except Cancelled:
        raise ValueError(f"scoring cancelled{_after(SCORE_CANCEL, request)}: press Score to start again") from None
    head = f"Over the first {n:,} tokens of the held-out text ({rows[0]['positions']:,} predicted positions):\n\n"
    return head + draw.quality_table(rows) + "\n\n" + draw.llama_cpp_note()


def wire(c: MeasurePage, config: AppConfig) -> None:
    def run(formats, progress=PROGRESS, request: gr.Request = None) -> dict:
        return dict(zip(c.speed, measure(config, formats, progress, request), strict=True))

    def scored(formats, parts, tokens, progress=PROGRESS, request: gr.Request = None) -> dict:
        return {c.quality: score(config, formats, parts, tokens, progress, request)}

    # one progress line each, on one output: on every output it was drawn two or three times over the old results
    progress = {"show_progress_on": c.speed.figure}
    model_event(c.measure.click, run, c.formats, list(c.speed), message=c.message, **progress)
    score_inputs = [c.score_formats, c.parts, c.tokens]
    model_event(c.score.click, scored, score_inputs, [c.quality], message=c.score_message)
    CANCEL.wire(c.cancel)
    SCORE_CANCEL.wire(c.score_cancel)
