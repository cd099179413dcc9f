"""The measurement functions on the tiny model with tiny sizes: well-formed results, honest repeats, cancel."""

import pytest
import torch

from decoding.timing import machine
from decoding.timing import roofline as rl
from decoding.timing.limits import measure_bandwidth, measure_peak_flops, repeat_timed
from decoding.timing.plans import Plan, filler_ids
from decoding.timing.shape import model_shape
from decoding.timing.sweeps import batch_sweep, cache_vs_nocache, context_sweep, measure_all
from decoding.watch import Watch

CPU = torch.device("cpu")
TINY_PLAN = Plan(
    name="test",
    prefill_lengths=(4, 16),
    repeats=2,
    warmup=1,
    decode_steps=2,
    naive_prompt=4,
    naive_tokens=4,
    batches=(1, 2, 4),
    batch_context=8,
    request_prompt=8,
    request_tokens=4,
)


@pytest.fixture(autouse=True)
def small_probes(monkeypatch):
    """The machine's copy and matmul at tiny sizes: these tests check the plumbing, not the machine."""
    monkeypatch.setitem(machine.COPY_MB, "cpu", 4)
    monkeypatch.setitem(machine.MATMUL_N, "cpu", 64)


BENCH_KEYS = ("device", "bandwidth_gbs", "peak_tflops", "weight_bytes", "prefill_ms", "decode_ms", "floor_ms", "mbu")


def test_repeat_timed_discards_the_warmup_runs():
    calls = []
    times = repeat_timed(CPU, lambda: calls.append(1), repeats=3, warmup=2, watch=Watch())
    assert len(calls) == 5 and len(times) == 3
    assert all(t >= 0 for t in times)


def test_repeats_must_be_at_least_one():
    with pytest.raises(ValueError, match="repeats"):
        repeat_timed(CPU, lambda: None, repeats=0, warmup=0, watch=Watch())


def test_bandwidth_counts_read_and_write_of_the_copy():
    probe = measure_bandwidth(CPU, torch.float32, mbytes=4, repeats=2, warmup=1)
    assert probe.work == 2 * 4 * 2**20 and len(probe.ms) == 2 and probe.value > 0


def test_peak_flops_counts_two_n_cubed():
    probe = measure_peak_flops(CPU, torch.float32, n=64, repeats=2, warmup=1)
    assert probe.work == 2 * 64**3 and probe.unit == "TFLOP/s" and probe.value > 0


def test_copy_size_out_of_range_is_refused():
    with pytest.raises(ValueError, match=r"\[1, 8192\]"):
        measure_bandwidth(CPU, torch.float32, mbytes=0)


def test_tied_embeddings_are_counted_once_as_the_lm_head(tiny):
    shape = model_shape(tiny)
    assert tiny.model.config.tie_word_embeddings
    assert shape.head_params == 259 * 64
    # parameters() lists the tied matrix once, so every parameter is read exactly once per step
    assert shape.params_read == sum(p.numel() for p in tiny.model.parameters())
    assert shape.weight_bytes == 4 * shape.params_read
    assert (shape.layers, shape.q_heads, shape.kv_heads, shape.head_dim) == (2, 4, 2, 16)


def test_context_sweep_times_prefill_at_each_length_and_a_decode_step_after_it(tiny):
    prefill, decode = context_sweep(tiny, TINY_PLAN, Watch())
    assert [s.x for s in prefill] == [4, 16] and [s.x for s in decode] == [5, 17]
    assert all(len(s.ms) == 2 for s in prefill) and all(len(s.ms) == 2 for s in decode)
    assert all(s.median_ms > 0 for s in prefill + decode)


def test_the_kv_cache_does_not_change_the_greedy_tokens(tiny):
    naive, cached = cache_vs_nocache(tiny, TINY_PLAN, Watch())
    assert naive.ids == cached.ids and len(naive.ids) == 4
    assert naive.context == cached.context == [4, 5, 6, 7]


def test_batch_sweep_times_one_step_per_batch_size(tiny):
    samples = batch_sweep(tiny, TINY_PLAN, Watch())
    assert [s.x for s in samples] == [1, 2, 4] and all(len(s.ms) == 2 for s in samples)


def test_filler_must_fit_the_context_window(tiny):
    assert len(filler_ids(tiny, 100)) == 100
    with pytest.raises(ValueError, match="length must be"):
        filler_ids(tiny, tiny.context_length)


def test_measure_all_fills_every_part_and_reports_progress_up_to_one(tiny):
    fractions = []
    m = measure_all(tiny, TINY_PLAN, Watch(on_progress=lambda f, msg: fractions.append(f)))
    assert not m.cancelled and m.request and m.naive and len(m.batch) == 3
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    summary = rl.summary(m)
    assert all(key in summary for key in BENCH_KEYS)
    assert summary["weight_bytes"] == model_shape(tiny).weight_bytes
    points = rl.roofline_points(m)
    assert [p["phase"] for p in points] == ["prefill"] * 2 + ["decode"] * 3
    decode = [p["intensity"] for p in points if p["phase"] == "decode"]
    assert decode == sorted(decode)  # a bigger batch reuses each weight byte more


def test_cancel_stops_at_the_next_forward_pass_and_keeps_what_was_measured(tiny):
    checks = []

    def stop_after_a_few():
        checks.append(1)
        return len(checks) > 12

    m = measure_all(tiny, TINY_PLAN, Watch(should_stop=stop_after_a_few))
    assert m.cancelled
    assert m.bandwidth is not None and m.request is None
    assert len(checks) == 13  # nothing ran after the check that said stop
    assert "bandwidth_gbs" in rl.summary(m)


def test_cancel_before_anything_measured_leaves_the_limits_empty(tiny):
    m = measure_all(tiny, TINY_PLAN, Watch(should_stop=lambda: True))
    assert m.cancelled and m.bandwidth is None and m.prefill == []
    assert "bandwidth_gbs" not in rl.summary(m)


@pytest.mark.bundled
def test_bundled_decode_step_reads_134_5_million_parameters(bundled):
    shape = model_shape(bundled)
    assert shape.params_read == 134_515_008 and shape.weight_bytes == 538_060_032
    assert (shape.layers, shape.kv_heads, shape.head_dim) == (30, 3, 64)
