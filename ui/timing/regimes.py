"""The "Prefill vs decode" tab's regime map: decode ms per token against weight bytes as the model grows, timed on
this machine (about a minute on two CPU cores, holding the model alone), kept for everyone here like the tab's
measurement."""

from dataclasses import asdict, dataclass

import gradio as gr

from decoding.timing import machine as machines
from decoding.timing.regimes import RegimeMap, regime_map, with_machine
from decoding.timing.shared import SharedMeasurements
from ui import gpu
from ui.context import AppConfig, get_model
from ui.events import PROGRESS, CancelFlags, message_line, model_event
from visuals.machine import device_label
from visuals.theme import empty_figure
from visuals.timing.regimes import RANDOM_WEIGHTS, regime_caption, regime_figure

FIRST_ESTIMATE_S = 60  # a first map on two CPU cores
GPU_SECONDS = 240  # ZeroGPU's estimate: up to a 34B shape built, filled and timed
SHARED = SharedMeasurements()  # the map is the machine's, not a student's


@dataclass(frozen=True)
class RegimesPanel:
    button: gr.Button
    again: gr.Button
    cancel: gr.Button
    message: gr.HTML
    plot: gr.Plot
    note: gr.Markdown


def layout() -> RegimesPanel:
    with gr.Accordion(
        "Regime map: decode time against weight bytes, as the model grows", open=False, elem_id="timing-regimes-map"
    ):
        gr.Markdown(
            "The same decode step timed at growing model size, one family (the bundled SmolLM2-135M's shape, then "
            "360M and 1.7B shapes; on a GPU, larger Llama shapes as its memory allows). Where a step is bound by "
            "its bytes, its dots follow the dashed line, bytes ÷ bandwidth (this machine's copy bandwidth, the "
            "figure the tab's measurement shows); where something else bounds it, they "
            f"stay flat above it.\n\n{RANDOM_WEIGHTS}"
        )
        with gr.Row():
            button = gr.Button(
                "Map the regimes", variant="primary", scale=0, min_width=170, elem_id="timing-regimes-btn"
            )
            again = gr.Button("Re-map", scale=0, min_width=100)
            cancel = gr.Button("Cancel", variant="stop", scale=0, min_width=100, elem_id="timing-regimes-cancel")
        message = message_line("timing-regimes-message")
        plot = gr.Plot(value=empty_figure("Press Map the regimes"), show_label=False, elem_id="timing-regimes")
        note = gr.Markdown(elem_classes=["hint"], elem_id="timing-regimes-note")
    return RegimesPanel(button, again, cancel, message, plot, note)


def wire(c: RegimesPanel, config: AppConfig, cancel: CancelFlags) -> None:
    """`cancel`: the tab's one set of Cancel flags, so either Cancel button stops the tab's work."""

    def run(progress=PROGRESS, request: gr.Request = None) -> dict:
        return shown(c, map_regimes(config, cancel, progress, request))

    def run_again(progress=PROGRESS, request: gr.Request = None) -> dict:
        return shown(c, map_regimes(config, cancel, progress, request, again=True))

    model_event(c.button.click, run, None, [c.plot, c.note], message=c.message)
    model_event(c.again.click, run_again, None, [c.plot, c.note], message=c.message)
    cancel.wire(c.cancel)


def map_regimes(config: AppConfig, cancel: CancelFlags, progress, request, again: bool = False) -> RegimeMap:
    """The server's kept map for this machine and dtype when there is one (Re-map: a new one). Timing holds the model
    alone: the map builds models of its own, and needs a quiet machine."""
    lm = get_model(config)
    where = gpu.measured_where(lm)
    key = SHARED.key(where, "regime map", lm.dtype_name, "regimes")
    kept, machine = SHARED.get(key), machines.MACHINE.get(where, lm.dtype_name)
    if kept is None or again:
        eta = kept.measurements.seconds if kept else FIRST_ESTIMATE_S
        reused = None if again else machine  # Re-map probes the machine again and replaces its figure
        job = gpu.Job(mapped, (reused,), config, cancel.file_for(request), seconds=GPU_SECONDS)
        m = gpu.run(config, job, progress, "the regime map", exclusive=True, eta_s=eta)
        if m.machine_probed:
            machines.MACHINE.keep(where, lm.dtype_name, m.machine)
        SHARED.keep(key, m)
    else:  # against the machine's figure as it is now kept (Re-measure may have probed it again since)
        m = with_machine(kept.measurements, machine)
    if m.cancelled:
        gr.Warning(f"Regime map cancelled after {m.seconds:.0f} s: the chart shows the sizes timed.")
    return m


def mapped(lm, machine, watch) -> RegimeMap:
    """The measurement (ui.gpu: plain data in and out), on the device and in the dtype `lm` runs in; `machine`:
    the server's kept figure of this machine, or None to probe it."""
    return regime_map(lm.device.type, lm.dtype_name, watch=watch, machine=machine)


def shown(c: RegimesPanel, m: RegimeMap) -> dict:
    points = [asdict(p) for p in m.points]
    label = f"random weights · {m.dtype} · {device_label(m.device_name)}"
    return {
        c.plot: regime_figure(points, m.bandwidth_gbs, label),
        c.note: regime_caption(points, m.bandwidth_gbs, m.skipped, m.cancelled, m.device),
    }
