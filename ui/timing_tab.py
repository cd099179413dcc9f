"""The "Prefill vs decode" tab: measure, on this machine, why decode is memory-bound and prefill is not."""

import gradio as gr

from decoding import values
from decoding.timing import roofline as rl
from decoding.timing.limits import device_name
from decoding.timing.plans import PLANS
from decoding.timing.shared import SharedMeasurements
from decoding.timing.sweeps import Measurements, measure_all
from ui.context import AppConfig, get_model, model_turn
from ui.events import PROGRESS, CancelFlags, model_event, teach
from visuals.roofline import roofline_figure
from visuals.theme import empty_figure
from visuals.timing import batch_figure, cache_figure, phases_figure, request_figure
from visuals.timing_captions import captions, headline

TRY_THIS = """
**Try this**
1. Press **Measure** (about a minute on a CPU). It times the loaded model on this machine; nothing is quoted.
   The first measurement is kept for everyone on this server (it needs the machine to itself while it runs);
   **Re-measure** takes a new one.
2. On the roofline, find **b=1** (decode, one sequence): far left, on the bandwidth slope. The sentence under
   the chart says what share of this machine's memory bandwidth it used.
3. Follow the decode dots as the batch grows: they move right and up, because one read of the weights now
   serves many sequences.
4. In the request timeline, compare the prefill block with the decode steps: which one dominates the wall time?
5. In the calculator, change a row's bandwidth, or bytes per parameter (2 → 1 for INT8), and watch the floor
   per token move.
"""
CHARTS = {"roofline": "The roofline", "phases": "Prefill and decode", "cache": "KV cache vs none",
          "batch": "Batch size", "request": "One request"}  # fmt: skip
PLAN_CHOICES = [
    ("quick (≈1 min on CPU)", "quick"),
    ("thorough (several minutes on CPU)", "thorough"),
    ("GPU sizes", "gpu"),
]
HEADERS = {
    "model": "model", "params_b": "params (B)", "bytes_per_param": "bytes/param", "layers": "layers",
    "kv_heads": "KV heads", "head_dim": "head dim", "context": "context", "hardware": "hardware",
    "bandwidth_gbs": "GB/s", "memory_gb": "memory GB", "measured_ms": "measured ms", "weights_gb": "weights GB",
    "floor_ms": "floor ms", "max_tokens_per_s": "max tok/s", "kv_gb_per_seq": "KV GB/seq", "sequences_fit": "seqs fit",
    "mbu": "MBU",
}  # fmt: skip
EDITABLE = ("model", "params_b", "bytes_per_param", "layers", "kv_heads", "head_dim", "context", "hardware",
            "bandwidth_gbs", "memory_gb")  # fmt: skip
RESULTS = ("model", "hardware", "weights_gb", "floor_ms", "measured_ms", "mbu", "max_tokens_per_s", "kv_gb_per_seq",
           "sequences_fit")  # fmt: skip
INTEGERS = ("layers", "kv_heads", "head_dim", "context")
CANCEL = CancelFlags()
SHARED = SharedMeasurements()  # one per server: a measurement is the machine's, not a student's
FIRST_ESTIMATE_S = 60  # how long a first quick measurement is announced to take on a CPU


def table_values(rows: list[rl.CalculatorRow], columns: tuple[str, ...]) -> list[list]:
    """The calculator's rows as table cells, rounded for reading."""
    return [[_round(rl.calculate(row)[c]) for c in columns] for row in rows]


def _round(v):
    if isinstance(v, float):
        return round(v, 3) if abs(v) < 10 else round(v, 1)
    return "—" if v is None else v


@teach
def recalculate(inputs, measured: dict | None) -> list[list]:
    """The results table from the (possibly edited) inputs table; `measured` is {model: ms} from Measure."""
    rows = inputs.values.tolist() if hasattr(inputs, "values") else inputs
    parsed = [_parse_row(r, measured or {}) for r in rows if any(str(v).strip() for v in r)]
    return table_values(parsed, RESULTS)


def _parse_row(values: list, measured: dict) -> rl.CalculatorRow:
    fields = {}
    for name, v in zip(EDITABLE, values):
        if name in ("model", "hardware"):
            fields[name] = str(v)
            continue
        try:
            fields[name] = int(float(v)) if name in INTEGERS else float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{HEADERS[name]} must be a number, got {v!r}") from None
    return rl.CalculatorRow(**fields, measured_ms=measured.get(fields["model"]))


def figures(m: Measurements | None) -> tuple:
    """Every chart of the tab for one measurement (empty prompts before the first)."""
    if m is None:
        return (roofline_figure([], 0, 0, ""), phases_figure([], [], [], [], ""), cache_figure([], [], [], ""),
                batch_figure([], [], ""), request_figure(None, [], 0, ""))  # fmt: skip
    label = f"{m.model} · {m.dtype} · {m.device_name}"
    bw, peak = (m.bandwidth.value if m.bandwidth else 0), (m.peak.value if m.peak else 0)
    naive, cached, req = m.naive, m.cached, m.request
    return (
        roofline_figure(rl.roofline_points(m), bw, peak, label),
        phases_figure([s.x for s in m.prefill], [s.ms for s in m.prefill], [s.x for s in m.decode],
                      [s.ms for s in m.decode], label),
        cache_figure(naive.context, naive.ms, cached.ms, label) if naive else empty_figure("not measured (cancelled)"),
        batch_figure([s.x for s in m.batch], [s.ms for s in m.batch], label),
        request_figure(req.ms[0], req.ms[1:], req.context[0], label) if req else empty_figure("not measured"),
    )  # fmt: skip


def build(config: AppConfig) -> None:
    gr.Markdown(
        "## Prefill vs decode\nPrefill reads the whole prompt in one pass and keeps the arithmetic units busy; "
        "decode produces one token per pass and spends it waiting for the weights to arrive from memory. "
        "This tab measures both on the machine the app runs on."
    )
    gr.Markdown(TRY_THIS)
    with gr.Row():
        plan = gr.Radio(PLAN_CHOICES, value="quick", label="How much to measure", scale=3)
        measure_btn = gr.Button("Measure", variant="primary", scale=1, elem_id="timing-measure")
        again_btn = gr.Button("Re-measure", scale=1)
        cancel_btn = gr.Button("Cancel", variant="stop", scale=1)
    summary_md = gr.Markdown("*No measurement yet: press **Measure**.*", elem_id="timing-summary")
    plots, notes = [], []
    for name, title in CHARTS.items():
        gr.Markdown(f"### {title}")
        plots.append(gr.Plot(value=empty_figure("Press Measure"), show_label=False, elem_id=f"timing-{name}"))
        notes.append(gr.Markdown(elem_classes=["hint"], elem_id=f"timing-{name}-note"))
    gr.Markdown(
        "### Back-of-envelope calculator\nFloor per token = weights ÷ bandwidth; KV cache = 2 × layers × KV heads × "
        "head dim × tokens × bytes; sequences that fit = (memory − weights − overhead) ÷ KV per sequence. "
        "Overhead is 3 GB, as in the references. Edit any cell of the first table; the second recomputes. "
        "After **Measure**, the first row is the loaded model on this machine, its measured decode step next to "
        "its floor."
    )
    inputs = gr.Dataframe(
        value=table_values(rl.REFERENCE_ROWS, EDITABLE), headers=[HEADERS[c] for c in EDITABLE], type="array",
        interactive=True, label="inputs (editable)", elem_id="timing-inputs",
        column_widths=["22%", *["8.5%"] * 6, "16%", "7%", "8%"],
        datatype=["str", *["number"] * 6, "str", "number", "number"],
    )  # fmt: skip
    results = gr.Dataframe(
        value=table_values(rl.REFERENCE_ROWS, RESULTS), headers=[HEADERS[c] for c in RESULTS], type="array",
        interactive=False, label="what follows", elem_id="timing-results", column_widths=["22%", "16%", *["9%"] * 7],
    )  # fmt: skip
    measured = gr.State(None)

    def run(plan_name, progress=PROGRESS, request: gr.Request = None):
        return measure(config, plan_name, progress, request)

    def run_again(plan_name, progress=PROGRESS, request: gr.Request = None):
        return measure(config, plan_name, progress, request, again=True)

    outputs = [summary_md, *plots, *notes, inputs, results, measured]
    model_event(measure_btn.click, run, plan, outputs, gpu_s=180)
    model_event(again_btn.click, run_again, plan, outputs, gpu_s=180)
    CANCEL.wire(cancel_btn)
    inputs.input(recalculate, inputs=[inputs, measured], outputs=results, show_progress="hidden")


def measure(config: AppConfig, plan_name, progress, request, again: bool = False) -> tuple:
    """Measure button: the server's kept measurement of this plan when there is one (Re-measure: a new one), then
    the headline, charts, captions and both tables. Measuring holds the model alone: it needs a quiet machine."""
    plan = PLANS[values.choice("How much to measure", plan_name, PLANS)]
    lm = get_model(config)
    key = SHARED.key(device_name(lm.device), lm.model_id, lm.dtype_name, plan.name)
    kept = SHARED.get(key)
    if kept is None or again:
        eta = kept.measurements.seconds if kept else FIRST_ESTIMATE_S
        with model_turn(lm, "a timing measurement", exclusive=True, eta_s=eta):
            m = measure_all(lm, plan, CANCEL.watch(request, progress))
        kept, note = SHARED.keep(key, m), "measured just now"
    else:
        m, note = kept.measurements, f"measured at {kept.when()} on this machine, shared with everyone here"
    note = f"*{note.capitalize()}: press **Re-measure** for a new measurement.*\n\n" if kept is not None else ""
    mine = [rl.measured_row(m)] if m.bandwidth else []
    rows = mine + list(rl.REFERENCE_ROWS)
    if m.cancelled:
        gr.Warning(f"Measurement cancelled after {m.seconds:.0f} s: the charts show what was measured.")
    tables = table_values(rows, EDITABLE), table_values(rows, RESULTS)
    return (note + headline(m), *figures(m), *captions(m), *tables, {r.model: r.measured_ms for r in mine})
