"""The "Prefill vs decode" tab: measure, on this machine, why decode is memory-bound and prefill is not."""

import threading

import gradio as gr

from decoding.timing import roofline as rl
from decoding.timing.sweeps import PLANS, Measurements, measure_all
from decoding.watch import Watch
from ui.context import MODEL_QUEUE, AppConfig, get_model, gpu
from visuals.roofline import roofline_figure
from visuals.theme import empty_figure
from visuals.timing import batch_figure, cache_figure, phases_figure, request_figure

TRY_THIS = """
**Try this**
1. Press **Measure** (about a minute on a CPU). It times the loaded model on this machine; nothing is quoted.
2. On the roofline, find **b=1** (decode, one sequence): far left, on the bandwidth slope. The sentence under
   the chart says what share of this machine's memory bandwidth it used.
3. Follow the decode dots as the batch grows: they move right and up, because one read of the weights now
   serves many sequences.
4. In the request timeline, compare the prefill block with the decode steps: which one dominates the wall time?
5. In the calculator, change a row's bandwidth, or bytes per parameter (2 → 1 for INT8), and watch the floor
   per token move.
"""
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
PROGRESS = gr.Progress()  # gradio fills this in for the handler that names it
_cancel_flags: dict[str, threading.Event] = {}  # session -> "stop please", set by the Cancel button


def table_values(rows: list[rl.CalculatorRow], columns: tuple[str, ...]) -> list[list]:
    """The calculator's rows as table cells, rounded for reading."""
    return [[_round(rl.calculate(row)[c]) for c in columns] for row in rows]


def _round(v):
    if isinstance(v, float):
        return round(v, 3) if abs(v) < 10 else round(v, 1)
    return "—" if v is None else v


def recalculate(inputs, measured: dict | None) -> list[list]:
    """The results table from the (possibly edited) inputs table; `measured` is {model: ms} from Measure."""
    rows = inputs.values.tolist() if hasattr(inputs, "values") else inputs
    try:
        parsed = [_parse_row(r, measured or {}) for r in rows if any(str(v).strip() for v in r)]
    except ValueError as err:
        raise gr.Error(str(err)) from None
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


def headline(m: Measurements) -> str:
    s = rl.summary(m)
    if "bandwidth_gbs" not in s:
        return f"*Cancelled after {m.seconds:.0f} s, before the machine's limits were measured.*"
    parts = [
        f"**{m.device_name}**, {m.dtype}, {m.model_label}: measured in {m.seconds:.0f} s ({m.plan} plan"
        + (", cancelled" if m.cancelled else "")
        + ").",
        f"Memory bandwidth **{s['bandwidth_gbs']:.1f} GB/s** · matmul peak **{s['peak_tflops'] * 1e3:.0f} GFLOP/s** · "
        f"weights read per decode step **{s['weight_bytes'] / 1e6:.0f} MB** ({s['params_read'] / 1e6:.1f} M params) · "
        f"floor **{s['floor_ms']:.1f} ms/token**",
    ]
    if "decode_ms" in s:
        parts[-1] += f" · measured **{s['decode_ms']:.1f} ms/token** · MBU **{s['mbu']:.0%}**"
    return "\n\n".join(parts)


def captions(m: Measurements) -> tuple[str, str, str, str, str]:
    """One or two plain sentences under each chart, computed from this measurement."""
    s, out = rl.summary(m), []
    if "decode_ms" in s and m.batch:
        big = rl.decode_point(m.shape, m.batch[-1].x, m.batch_context + 1, m.batch[-1].median_ms)
        out.append(
            f"Decode at batch 1 did {s['decode_intensity']:.2f} FLOPs per byte and ran at {s['mbu']:.0%} of this "
            f"machine's memory bandwidth but only {s['decode_mfu']:.1%} of its matmul peak: it waits on memory. "
            f"The ridge point here is {s['ridge_flops_per_byte']:.1f} FLOPs/byte; at batch {big['x']} a step did "
            f"{big['intensity']:.1f} FLOPs/byte, and prefill of {s['prefill_tokens']} tokens "
            f"{s['prefill_intensity']:.0f} FLOPs/byte at {s['prefill_mfu']:.0%} of the matmul peak."
        )
    else:
        out.append("")
    if "prefill_ms" in s and "decode_ms" in s:
        per_token = s["prefill_ms"] / s["prefill_tokens"]
        first, last = m.decode[0], m.decode[-1]
        kv_mb = rl.kv_bytes_for(m.shape, last.x) / 1e6
        out.append(
            f"Prefill of {s['prefill_tokens']} tokens took {s['prefill_ms']:.0f} ms, {per_token:.1f} ms per token, "
            f"while one decode step took {s['decode_ms']:.1f} ms for a single token: "
            f"{s['decode_ms'] / per_token:.0f}× slower per token. A decode step took {first.median_ms:.0f} ms with "
            f"{first.x} tokens of context and {last.median_ms:.0f} ms with {last.x}: at {last.x} tokens the cache adds "
            f"{kv_mb:.0f} MB to the {m.shape.weight_bytes / 1e6:.0f} MB of weights every step reads."
        )
    else:
        out.append("")
    if m.naive and m.cached:
        naive_s, cached_s = sum(m.naive.ms) / 1e3, sum(m.cached.ms) / 1e3
        same = (
            "Both loops chose the same tokens."
            if m.naive.ids == m.cached.ids
            else ("The two loops' tokens differ somewhere: the same maths in a different order rounds differently.")
        )
        out.append(
            f"Generating {len(m.naive.ms)} tokens took {naive_s:.1f} s re-running the whole sequence each step and "
            f"{cached_s:.1f} s with the KV cache ({naive_s / cached_s:.1f}× faster). The naive step grows with the "
            f"sequence ({m.naive.ms[1]:.0f} → {m.naive.ms[-1]:.0f} ms), so its total grows quadratically. {same}"
        )
    else:
        out.append("")
    if len(m.batch) > 1:
        one, big = m.batch[0], m.batch[-1]
        out.append(
            f"One step for {big.x} sequences took {big.median_ms:.0f} ms against {one.median_ms:.0f} ms for one: "
            f"{big.median_ms / one.median_ms:.1f}× the time for {big.x}× the tokens, "
            f"{big.x / big.median_ms * 1e3:.0f} tokens/s instead of {1e3 / one.median_ms:.0f}."
        )
    else:
        out.append("")
    out.append(_request_caption(m))
    return tuple(out)


def _request_caption(m: Measurements) -> str:
    if not m.request:
        return ""
    r = rl.request_numbers(m.request)
    text = (
        f"Time to first token {r['ttft_ms']:.0f} ms, time per output token {r['tpot_ms']:.1f} ms, end-to-end "
        f"{r['e2e_ms'] / 1e3:.2f} s for a {r['prompt_tokens']}-token prompt and {r['output_tokens']} output tokens: "
        f"decode was **{r['decode_share']:.0%}** of the wall time (the references quote ~97% on a mid-range GPU)."
    )
    if (r["prompt_tokens"], r["output_tokens"]) != (500, 200) and m.prefill and m.decode:
        est = rl.estimate_request([(s.x, s.median_ms) for s in m.prefill], [(s.x, s.median_ms) for s in m.decode],
                                  500, 200)  # fmt: skip
        text += (
            f" Scaled down to keep the measurement short; read off this machine's curves, a 500-token prompt with "
            f"200 output tokens would take ≈ {est['e2e_ms'] / 1e3:.1f} s, decode ≈ {est['decode_share']:.0%} of it."
        )
    return text


def build(config: AppConfig) -> None:
    gr.Markdown(
        "## Prefill vs decode\nPrefill reads the whole prompt in one pass and keeps the arithmetic units busy; "
        "decode produces one token per pass and spends it waiting for the weights to arrive from memory. "
        "This tab measures both on the machine the app runs on."
    )
    gr.Markdown(TRY_THIS)
    with gr.Row():
        plan = gr.Radio(PLAN_CHOICES, value="quick", label="How much to measure", scale=3)
        measure_btn = gr.Button("Measure", variant="primary", scale=1)
        cancel_btn = gr.Button("Cancel", variant="stop", scale=1)
    summary_md = gr.Markdown("*No measurement yet: press **Measure**.*")
    plots, notes = [], []
    for title in ("The roofline", "Prefill and decode", "KV cache vs none", "Batch size", "One request"):
        gr.Markdown(f"### {title}")
        plots.append(gr.Plot(value=empty_figure("Press Measure"), show_label=False))
        notes.append(gr.Markdown(elem_classes=["hint"]))
    gr.Markdown(
        "### Back-of-envelope calculator\nFloor per token = weights ÷ bandwidth; KV cache = 2 × layers × KV heads × "
        "head dim × tokens × bytes; sequences that fit = (memory − weights − overhead) ÷ KV per sequence. "
        "Overhead is 3 GB, as in the references. Edit any cell of the first table; the second recomputes. "
        "After **Measure**, the first row is the loaded model on this machine, its measured decode step next to "
        "its floor."
    )
    inputs = gr.Dataframe(
        value=table_values(rl.REFERENCE_ROWS, EDITABLE), headers=[HEADERS[c] for c in EDITABLE], type="array",
        interactive=True, label="inputs (editable)", column_widths=["22%", *["8.5%"] * 6, "16%", "7%", "8%"],
        datatype=["str", *["number"] * 6, "str", "number", "number"],
    )  # fmt: skip
    results = gr.Dataframe(
        value=table_values(rl.REFERENCE_ROWS, RESULTS), headers=[HEADERS[c] for c in RESULTS], type="array",
        interactive=False, label="what follows", column_widths=["22%", "16%", *["9%"] * 7],
    )  # fmt: skip
    measured = gr.State(None)

    @gpu(duration=180)
    def run(plan_name, progress=PROGRESS, request: gr.Request = None):
        if plan_name not in PLANS:
            raise gr.Error(f"unknown plan {plan_name!r}; choose one of {', '.join(PLANS)}")
        lm = get_model(config)
        flag = _cancel_flags.setdefault(_session(request), threading.Event())
        flag.clear()
        watch = Watch(lambda f, msg: progress(f, desc=msg), flag.is_set)
        m = measure_all(lm, PLANS[plan_name], watch)
        mine = [rl.measured_row(m)] if m.bandwidth else []
        rows = mine + list(rl.REFERENCE_ROWS)
        if m.cancelled:
            gr.Warning(f"Measurement cancelled after {m.seconds:.0f} s: the charts show what was measured.")
        tables = table_values(rows, EDITABLE), table_values(rows, RESULTS)
        return (headline(m), *figures(m), *captions(m), *tables, {r.model: r.measured_ms for r in mine})

    def cancel(request: gr.Request = None):
        _cancel_flags.setdefault(_session(request), threading.Event()).set()

    measure_btn.click(
        run, inputs=plan, outputs=[summary_md, *plots, *notes, inputs, results, measured], concurrency_id=MODEL_QUEUE,
    )  # fmt: skip
    cancel_btn.click(cancel, concurrency_limit=None, show_progress="hidden")
    inputs.input(recalculate, inputs=[inputs, measured], outputs=results, show_progress="hidden")


def _session(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "default"
