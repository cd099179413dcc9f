"""The "Prefill vs decode" tab: measure, on this machine, why decode is memory-bound and prefill is not."""

from dataclasses import dataclass
from typing import NamedTuple

import gradio as gr

from decoding import values
from decoding.timing import calculator as calc
from decoding.timing import machine as machines
from decoding.timing import roofline as rl
from decoding.timing.plans import PLANS
from decoding.timing.shared import SharedMeasurements
from decoding.timing.sweeps import Measurements, measure_all, with_machine
from ui import gpu
from ui.context import AppConfig, get_model
from ui.events import PROGRESS, CancelFlags, message_line, model_event
from ui.lesson import lesson, try_this
from ui.tabs import TabSpec
from ui.timing import calculator, regimes
from visuals.glossary import term
from visuals.machine import device_label
from visuals.theme import empty_figure
from visuals.timing.captions import captions, headline
from visuals.timing.roofline import roofline_figure
from visuals.timing.sweeps import batch_figure, cache_figure, phases_figure, request_figure

LESSON = (
    "Prefill reads the whole prompt in one pass and keeps the arithmetic units busy; decode produces one token per "
    "pass and spends it waiting for the weights to arrive from memory."
)
TRY_THIS = f"""This tab measures both on the machine the app runs on.
1. Press **Measure** (about a minute on a CPU). It times the loaded model on this machine; nothing is quoted.
   The first measurement is kept for everyone on this server (it needs the machine to itself while it runs);
   **Re-measure** takes a new one. Its memory bandwidth and {term("matmul")} peak are this machine's figures, the
   ones the regime map and the Quantization tab compare with.
2. On the {term("roofline")}, find **b=1** (decode, one sequence): far left, on the bandwidth slope. The sentence under
   the chart says what share of this machine's memory bandwidth it used.
3. Follow the decode dots as the batch grows: they move right and up, because one read of the weights now
   serves many sequences.
4. In the request timeline, compare the prefill block with the decode steps: which one dominates the wall time?
5. In the calculator, change a row's bandwidth, or bytes per parameter (2 → 1 for INT8), and watch the floor
   per token move.
"""


class Charts(NamedTuple):
    """One entry per chart, in the order the tab shows them (and `captions` writes them)."""

    roofline: object
    phases: object
    cache: object
    batch: object
    request: object


TITLES = Charts(
    roofline=f"The {term('roofline')}: speed against {term('arithmetic intensity')}",
    phases="Prefill and decode",
    cache=f"{term('KV cache')} vs none",
    batch="Batch size",
    request="One request",
)
PLAN_CHOICES = [
    ("quick (≈1 min on CPU)", "quick"),
    ("thorough (several minutes on CPU)", "thorough"),
    ("GPU sizes", "gpu"),
]
CANCEL = CancelFlags()
SHARED = SharedMeasurements()  # one per server: a measurement is the machine's, not a student's
FIRST_ESTIMATE_S = 60  # how long a first quick measurement is announced to take on a CPU
GPU_SECONDS = 180  # ZeroGPU's estimate for one measurement (the thorough plan included)


def figures(m: Measurements | None) -> Charts:
    """Every chart of the tab for one measurement (empty prompts before the first)."""
    if m is None:
        return Charts(
            roofline=roofline_figure([], 0, 0, ""),
            phases=phases_figure([], [], [], [], ""),
            cache=cache_figure([], [], [], ""),
            batch=batch_figure([], [], ""),
            request=request_figure(None, [], 0, ""),
        )
    label = f"{m.model} · {m.dtype} · {device_label(m.device_name)}"
    bw, peak = (m.bandwidth.value if m.bandwidth else 0), (m.peak.value if m.peak else 0)
    naive, cached, req, prefill, decode = m.naive, m.cached, m.request, m.prefill, m.decode
    cache = (
        cache_figure(naive.context, naive.ms, cached.ms, label) if naive else empty_figure("not measured (cancelled)")
    )
    return Charts(
        roofline=roofline_figure(rl.roofline_points(m), bw, peak, label),
        phases=phases_figure(
            [s.x for s in prefill], [s.ms for s in prefill], [s.x for s in decode], [s.ms for s in decode], label
        ),
        cache=cache,
        batch=batch_figure([s.x for s in m.batch], [s.ms for s in m.batch], label),
        request=request_figure(req.ms[0], req.ms[1:], req.context[0], label) if req else empty_figure("not measured"),
    )


def measured_on(lm, plan, machine, watch) -> Measurements:
    """The measurement (ui.gpu: plain data in and out); `machine`: the server's kept figure, or None to probe it."""
    return measure_all(lm, plan, watch, machine=machine)


class Measured(NamedTuple):
    """What a measurement shows: the headline, each chart and its caption, both tables, and {model: ms} for them."""

    summary: str
    plots: Charts
    notes: Charts
    inputs: list
    results: list
    measured: dict


@dataclass(frozen=True)
class TimingPage:
    plan: gr.Radio
    measure_btn: gr.Button
    again_btn: gr.Button
    cancel_btn: gr.Button
    message: gr.HTML
    summary: gr.Markdown
    plots: Charts  # of gr.Plot
    notes: Charts  # of gr.Markdown, the sentence under each chart
    calculator: calculator.Calculator  # its tables show each measurement's row
    measured: gr.State  # {model: measured ms} of the last measurement, for the calculator
    regimes: regimes.RegimesPanel  # the regime map, in an accordion of its own under the calculator

    def show(self, m: Measured) -> dict:
        """A measurement as {component: value}, each chart and caption by its name."""
        return {
            self.summary: m.summary,
            **dict(zip(self.plots, m.plots)),
            **dict(zip(self.notes, m.notes)),
            self.calculator.inputs: m.inputs,
            self.calculator.results: m.results,
            self.measured: m.measured,
        }


def layout(config: AppConfig) -> TimingPage:
    """The tab's components, inside the caller's gr.Tab. `config` is unused: nothing is measured at layout."""
    lesson(
        LESSON,
        "Prefill vs decode",
        first="**Start here:** press **Measure** (about a minute) and read the sentence under the chart.",
    )
    try_this(TRY_THIS, 5, "timing-try")
    with gr.Row():
        # buttons as narrow as their words: the plan's three choices stay on one row, in projector mode's larger type
        # too (1280x720; on two rows they pushed the roofline below the screen)
        plan = gr.Radio(PLAN_CHOICES, value="quick", label="How much to measure", scale=1, min_width=300)
        measure_btn = gr.Button("Measure", variant="primary", scale=0, min_width=140, elem_id="timing-measure")
        again_btn = gr.Button("Re-measure", scale=0, min_width=140)
        cancel_btn = gr.Button("Cancel", variant="stop", scale=0, min_width=140)
    message = message_line("timing-message")
    summary = gr.Markdown("*No measurement yet: press **Measure**.*", elem_id="timing-summary")
    plots, notes = {}, {}
    for name, title in TITLES._asdict().items():
        gr.Markdown(f"### {title}")
        plots[name] = gr.Plot(value=empty_figure("Press Measure"), show_label=False, elem_id=f"timing-{name}")
        notes[name] = gr.Markdown(elem_classes=["hint"], elem_id=f"timing-{name}-note")
    return TimingPage(
        plan=plan,
        measure_btn=measure_btn,
        again_btn=again_btn,
        cancel_btn=cancel_btn,
        message=message,
        summary=summary,
        plots=Charts(**plots),
        notes=Charts(**notes),
        calculator=calculator.layout(),
        measured=gr.State(None),
        regimes=regimes.layout(),
    )


def wire(c: TimingPage, config: AppConfig) -> None:
    def run(plan_name, progress=PROGRESS, request: gr.Request = None) -> dict:
        return c.show(measure(config, plan_name, progress, request))

    def run_again(plan_name, progress=PROGRESS, request: gr.Request = None) -> dict:
        return c.show(measure(config, plan_name, progress, request, again=True))

    outputs = [c.summary, *c.plots, *c.notes, c.calculator.inputs, c.calculator.results, c.measured]
    model_event(c.measure_btn.click, run, c.plan, outputs, message=c.message)
    model_event(c.again_btn.click, run_again, c.plan, outputs, message=c.message)
    CANCEL.wire(c.cancel_btn)
    calculator.wire(c.calculator, c.measured)
    regimes.wire(c.regimes, config, CANCEL)


def build(config: AppConfig) -> None:
    wire(layout(config), config)


SPEC = TabSpec(
    "Prefill vs decode",
    "timing",
    30,
    build,
    main="#timing-measure",
    chart="#timing-roofline",
    try_this="#timing-try",
    summary=(
        "prefill is compute-bound, decode is memory-bandwidth-bound, measured on this device, with the roofline that "
        "explains it."
    ),
)


def measure(config: AppConfig, plan_name, progress, request, again: bool = False) -> Measured:
    """Measure button: the server's kept measurement of this plan when there is one (Re-measure: a new one), then
    the headline, charts, captions and both tables. Measuring holds the model alone: it needs a quiet machine."""
    plan = PLANS[values.choice("How much to measure", plan_name, PLANS)]
    lm = get_model(config)
    where = gpu.measured_where(lm)
    key = SHARED.key(where, lm.model_id, lm.dtype_name, plan.name)
    kept, machine = SHARED.get(key), machines.MACHINE.get(where, lm.dtype_name)
    if kept is None or again:
        eta = kept.measurements.seconds if kept else FIRST_ESTIMATE_S
        reused = None if again else machine  # Re-measure probes the machine again and replaces its figure
        job = gpu.Job(measured_on, (plan, reused), config, CANCEL.file_for(request), seconds=GPU_SECONDS)
        m = gpu.run(config, job, progress, "a timing measurement", exclusive=True, eta_s=eta)
        if m.machine_probed:
            machines.MACHINE.keep(where, lm.dtype_name, m.machine)
        kept, note = SHARED.keep(key, m), "measured just now"
    else:  # against the machine's figure as it is now kept (the regime map may have probed it again since)
        m = with_machine(kept.measurements, machine)
        note = f"measured at {kept.when()} on this machine, shared with everyone here"
    note = f"*{note.capitalize()}: press **Re-measure** for a new measurement.*\n\n" if kept is not None else ""
    mine = [calc.measured_row(m)] if m.bandwidth else []
    rows = mine + list(calc.REFERENCE_ROWS)
    if m.cancelled:
        gr.Warning(f"Measurement cancelled after {m.seconds:.0f} s: the charts show what was measured.")
    return Measured(
        summary=note + headline(m),
        plots=figures(m),
        notes=Charts._make(captions(m)),  # captions() writes one per chart, in the tab's order
        inputs=calculator.table_values(rows, calculator.EDITABLE),
        results=calculator.table_values(rows, calculator.RESULTS),
        measured={r.model: r.measured_ms for r in mine},
    )
