"""Prefill vs decode, measured on the loaded model: the sweeps behind the timing lab.

1) the machine's limits (machine.py: copy bandwidth and matmul FLOP/s in the model's dtype, by the one method every
   lesson reads), probed here unless the server's kept figure is handed in;
2) context sweep: prefill time at each prompt length, and one decode step on that cache;
3) KV cache vs none: the naive loop re-runs the whole sequence every step, the cached loop one token;
4) batch sweep: one decode step for 1, 2, 4 … 64 sequences at once (the weights are read once for all);
5) one request: prefill, then decode steps, so TTFT and time per output token come from the same run.
N output tokens take one prefill and N - 1 decode passes (the last token needs no forward pass).
Every sweep checks `watch` before each forward pass, so the UI can show progress and stop it.
"""

import copy
import time
from dataclasses import dataclass, field, replace

import torch

from decoding.clock import Timer
from decoding.forward import forward, forward_one, rewind
from decoding.models import LoadedModel
from decoding.timing.limits import Probe, Sample, device_memory_bytes, device_name, repeat_timed
from decoding.timing.machine import MachineFigure, probe
from decoding.timing.plans import Plan, default_plan, filler_ids
from decoding.timing.shape import ModelShape, model_shape
from decoding.watch import Cancelled, Watch


@dataclass
class TimedLoop:
    """Per-step forward times of one generation loop: step 0 is the prompt, later steps one token each."""

    ms: list[float]
    context: list[int]  # tokens the forward pass saw, per step
    ids: list[int]  # the greedy tokens produced


def context_sweep(lm: LoadedModel, plan: Plan, watch: Watch) -> tuple[list[Sample], list[Sample]]:
    """Prefill times at each prompt length, and decode-step times on each of those caches."""
    prefill, decode = [], []
    lengths = [n for n in plan.prefill_lengths if n < lm.context_length - 1]
    for i, n in enumerate(lengths):
        watch.on_progress(i / len(lengths), f"prefill of {n} tokens")
        ids, out = filler_ids(lm, n), {}

        def run_prefill(ids=ids, out=out):
            out["logits"], out["cache"] = forward_one(lm, ids, None, 0)

        prefill.append(Sample(n, repeat_timed(lm.device, run_prefill, plan.repeats, plan.warmup, watch)))
        cache, token = out["cache"], int(out["logits"].argmax())

        def run_decode(cache=cache, token=token, n=n):
            forward_one(lm, [token], cache, n)
            rewind(cache, n)  # back to n tokens, so every timed step sees the same context

        decode.append(Sample(n + 1, repeat_timed(lm.device, run_decode, plan.decode_steps, plan.warmup, watch)))
    return prefill, decode


def cached_loop(lm: LoadedModel, prompt: list[int], new_tokens: int, watch: Watch) -> TimedLoop:
    """Greedy generation with a KV cache: one prefill, then one token per forward pass."""
    return _greedy_loop(lm, prompt, new_tokens, watch, cached=True)


def naive_loop(lm: LoadedModel, prompt: list[int], new_tokens: int, watch: Watch) -> TimedLoop:
    """Greedy generation without a cache: every step re-runs the whole sequence so far."""
    return _greedy_loop(lm, prompt, new_tokens, watch, cached=False)


def _greedy_loop(lm: LoadedModel, prompt: list[int], new_tokens: int, watch: Watch, cached: bool) -> TimedLoop:
    ms, context, ids, cache = [], [], list(prompt), None
    for step in range(new_tokens):
        watch.check()
        feed = ids[-1:] if cached and step > 0 else ids
        with Timer(lm.device) as t:
            logits, cache = forward_one(lm, feed, cache if cached else None, len(ids) - len(feed))
            token = int(logits.argmax())
        ms.append(t.ms)
        context.append(len(ids))
        ids.append(token)
    return TimedLoop(ms, context, ids[len(prompt) :])


def cache_vs_nocache(lm: LoadedModel, plan: Plan, watch: Watch) -> tuple[TimedLoop, TimedLoop]:
    """The same greedy run twice: re-running everything (naive) and with the KV cache."""
    prompt = filler_ids(lm, plan.naive_prompt)
    for _ in range(plan.warmup):
        forward_one(lm, prompt, None, 0)
    return naive_loop(lm, prompt, plan.naive_tokens, watch), cached_loop(lm, prompt, plan.naive_tokens, watch)


@torch.inference_mode()
def batch_sweep(lm: LoadedModel, plan: Plan, watch: Watch) -> list[Sample]:
    """One decode step for B sequences sharing a `batch_context`-token cache; stops early if memory runs out."""
    ids = filler_ids(lm, plan.batch_context)
    logits, prompt_cache = forward_one(lm, ids, None, 0)
    token = int(logits.argmax())
    samples = []
    for i, b in enumerate(plan.batches):
        watch.on_progress(i / len(plan.batches), f"decode step at batch {b}")
        try:
            cache = copy.deepcopy(prompt_cache)
            cache.batch_repeat_interleave(b)
            step_ids = torch.full((b, 1), token, device=lm.device)  # (B, 1)

            def run_step(cache=cache, step_ids=step_ids):
                forward(lm, step_ids, cache, plan.batch_context)
                rewind(cache, plan.batch_context)

            samples.append(Sample(b, repeat_timed(lm.device, run_step, plan.repeats, plan.warmup, watch)))
        except torch.OutOfMemoryError:
            break  # this batch does not fit beside the weights: the sweep ends at the last one that did
    return samples


@dataclass
class Measurements:
    """Everything one press of Measure produced, as plain data (raw times kept)."""

    device: str
    device_name: str
    dtype: str
    model: str
    model_label: str
    plan: str
    shape: ModelShape
    memory_bytes: int
    bandwidth: Probe | None = None  # the machine's (machine.MachineFigure): probed on this run, or the kept one
    peak: Probe | None = None
    machine: MachineFigure | None = None  # the figure both came from
    machine_probed: bool = False  # True: probed during this measurement; False: the server's kept figure, reused
    prefill: list[Sample] = field(default_factory=list)  # x = prompt tokens
    decode: list[Sample] = field(default_factory=list)  # x = context tokens, batch 1
    naive: TimedLoop | None = None
    cached: TimedLoop | None = None
    batch: list[Sample] = field(default_factory=list)  # x = batch size
    batch_context: int = 0
    request: TimedLoop | None = None
    cancelled: bool = False
    seconds: float = 0.0


def measure_all(
    lm: LoadedModel, plan: Plan | None = None, watch: Watch | None = None, machine: MachineFigure | None = None
) -> Measurements:
    """Run every measurement of `plan` in order; on cancel, return what was measured so far. `machine`: the
    server's kept figure of this machine and dtype, reused instead of probing again (None: probe it now)."""
    plan, watch, start = plan or default_plan(lm.device), watch or Watch(), time.perf_counter()
    m = Measurements(
        device=str(lm.device),
        device_name=device_name(lm.device),
        dtype=lm.dtype_name,
        model=lm.model_id,
        model_label=lm.label,
        plan=plan.name,
        shape=model_shape(lm),
        memory_bytes=device_memory_bytes(lm.device),
        batch_context=plan.batch_context,
    )
    phases = _Phases(watch)
    try:
        limits = phases.next(0.10, "memory bandwidth and matmul peak")
        m.machine_probed = machine is None
        m.machine = probe(lm.device, lm.dtype, limits) if machine is None else machine
        m.bandwidth, m.peak = m.machine.bandwidth, m.machine.peak
        m.prefill, m.decode = context_sweep(lm, plan, phases.next(0.40, "prefill and decode vs context"))
        m.naive, m.cached = cache_vs_nocache(lm, plan, phases.next(0.25, "KV cache vs no cache"))
        m.batch = batch_sweep(lm, plan, phases.next(0.15, "batch sizes"))
        m.request = _request(lm, plan, phases.next(0.10, "one request"))
        watch.on_progress(1.0, "done")
    except Cancelled:
        m.cancelled = True
    m.seconds = time.perf_counter() - start
    return m


def with_machine(m: Measurements, machine: MachineFigure | None) -> Measurements:
    """The measurement against `machine` (the server's figure, probed again since `m` was taken): its bandwidth
    and peak, so every MBU, ridge point and floor reads the figure the other lessons quote. The times as measured."""
    if machine is None or m.bandwidth is None or m.machine == machine:
        return m
    return replace(m, bandwidth=machine.bandwidth, peak=machine.peak, machine=machine, machine_probed=False)


class _Phases:
    """One progress bar split into phases: each phase gets a Watch whose 0..1 fills its share of the bar."""

    def __init__(self, watch: Watch):
        self.watch, self.done = watch, 0.0

    def next(self, share: float, label: str) -> Watch:
        start = self.done
        self.watch.on_progress(start, label)
        self.done += share
        return Watch(lambda f, msg: self.watch.on_progress(start + share * f, msg), self.watch.should_stop)


def _request(lm, plan, watch):
    prompt_len = min(plan.request_prompt, lm.context_length - plan.request_tokens - 1)
    return cached_loop(lm, filler_ids(lm, prompt_len), plan.request_tokens, watch)
