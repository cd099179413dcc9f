"""The quantization tab's kernel survey: why a format runs simulated here, measured on this device's kernels with
the model's own matrices (a few seconds, holding the model alone)."""

from dataclasses import dataclass

import gradio as gr

from decoding.quantization.measured import kernel_rows
from decoding.timing.limits import device_name
from decoding.watch import Cancelled
from ui import gpu
from ui.context import AppConfig
from ui.events import PROGRESS, message_line, model_event
from ui.quantization.handlers import reference_config
from ui.quantization.measure import CANCEL, machine_gbs  # the tab's one Cancel stops this too
from visuals.glossary import term
from visuals.quantization import kernels as draw

REPEATS = 3
GPU_SECONDS = 120  # ZeroGPU's estimate: every kernel on every layer shape, three times


@dataclass(frozen=True)
class KernelsPage:
    button: gr.Button
    table: gr.Markdown
    said: gr.Markdown
    message: gr.HTML


def layout() -> KernelsPage:
    gr.Markdown(
        "### Why simulated? The kernels on this device\nA format is fast only if a kernel streams its fewer bytes "
        f"about as fast as float32's {term('GEMV')} ({term('F.linear')}) streams its own. This times every low-bit "
        f"kernel this device has ({term('_weight_int8pack_mm')}, {term('fbgemm')} ...) on the "
        "model's own matrices, one token at a time."
    )
    with gr.Row():
        said = gr.Markdown(elem_id="quantization-kernels-said")
        button = gr.Button(
            "Time the kernels", variant="primary", scale=0, min_width=170, elem_id="quantization-kernels-btn"
        )
    message = message_line("quantization-kernels-message")
    table = gr.Markdown(elem_id="quantization-kernels")
    return KernelsPage(button, table, said, message)


def survey(config: AppConfig, progress=PROGRESS, request: gr.Request = None) -> tuple[str, str]:
    job = gpu.Job(timed_kernels, (), reference_config(config), CANCEL.file_for(request), GPU_SECONDS)
    try:
        rows, where = gpu.run(config, job, progress, "a kernel measurement", exclusive=True)
    except Cancelled:
        raise ValueError("kernel timing cancelled: press Time the kernels to start again") from None
    machine = machine_gbs(config)
    return draw.kernels_table(rows, where, machine), draw.kernels_said(rows, machine)


def timed_kernels(lm, watch) -> tuple[list[dict], str]:
    """The measurement (ui.gpu: plain data in and out): each kernel's rows, and the device they ran on."""
    return kernel_rows(lm, REPEATS, watch), device_name(lm.device)


def wire(c: KernelsPage, config: AppConfig) -> None:
    def run(progress=PROGRESS, request: gr.Request = None) -> dict:
        table, said = survey(config, progress, request)
        return {c.table: table, c.said: said}

    model_event(c.button.click, run, None, [c.table, c.said], message=c.message, show_progress_on=c.table)
