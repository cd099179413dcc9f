"""The quantization tab's kernel survey: why a format runs simulated here, measured on this device's kernels with
the model's own matrices (a few seconds, holding the model alone)."""

from dataclasses import dataclass

import gradio as gr

from decoding.quantization.measured import kernel_rows
from decoding.timing.limits import device_name
from decoding.watch import Cancelled
from ui.context import AppConfig, model_turn
from ui.events import PROGRESS, message_line, model_event
from ui.quantization_handlers import reference_model
from ui.quantization_measure import CANCEL  # the tab's one Cancel stops this too
from visuals import quantization_kernels as draw

REPEATS = 3


@dataclass(frozen=True)
class KernelsPage:
    button: gr.Button
    table: gr.Markdown
    said: gr.Markdown
    message: gr.HTML


def layout() -> KernelsPage:
    gr.Markdown(
        "### Why simulated? The kernels on this device\nA format is fast only if a kernel streams its fewer bytes "
        "about as fast as float32's GEMV streams its own. This times every low-bit kernel this device has on the "
        "model's own matrices, one token at a time."
    )
    with gr.Row():
        said = gr.Markdown(elem_id="q-kernels-said")
        button = gr.Button("Time the kernels", variant="primary", scale=0, min_width=170, elem_id="q-kernels-btn")
    message = message_line("q-kernels-message")
    table = gr.Markdown(elem_id="q-kernels")
    return KernelsPage(button, table, said, message)


def survey(config: AppConfig, progress=PROGRESS, request: gr.Request = None) -> tuple[str, str]:
    lm = reference_model(config)
    try:
        with model_turn(lm, "a kernel measurement", exclusive=True):
            rows = kernel_rows(lm, REPEATS, CANCEL.watch(request, progress))
    except Cancelled:
        raise ValueError("kernel timing cancelled: press Time the kernels to start again") from None
    return draw.kernels_table(rows, device_name(lm.device)), draw.kernels_said(rows)


def wire(c: KernelsPage, config: AppConfig) -> None:
    def run(progress=PROGRESS, request: gr.Request = None) -> dict:
        table, said = survey(config, progress, request)
        return {c.table: table, c.said: said}

    model_event(c.button.click, run, None, [c.table, c.said], message=c.message, gpu_s=120)
