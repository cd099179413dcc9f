"""The sentences of the "Prefill vs decode" tab from a hand-made measurement: every number they quote is read off
it (no model, no clock)."""

from decoding.timing.limits import Probe, Sample
from decoding.timing.shape import ModelShape
from decoding.timing.sweeps import Measurements, TimedLoop
from visuals.timing_captions import captions, headline

SHAPE = ModelShape(
    body_params=100_000_000, head_params=25_000_000, layers=4, q_heads=4, kv_heads=2, head_dim=16, bytes_per_param=4
)


def measured(**parts) -> Measurements:
    m = Measurements("cpu", "a test CPU", "float32", "tiny", "tiny model", "quick", SHAPE, 8 * 10**9, seconds=12.0)
    for name, value in parts.items():
        setattr(m, name, value)
    return m


FULL = dict(
    bandwidth=Probe(10.0, "GB/s", [1.0], 1e9, "copy"),
    peak=Probe(0.1, "TFLOP/s", [1.0], 1e9, "matmul"),
    prefill=[Sample(16, [200.0]), Sample(64, [640.0])],
    decode=[Sample(16, [50.0]), Sample(64, [60.0])],
    naive=TimedLoop(ms=[100.0, 200.0, 300.0], context=[4, 5, 6], ids=[1, 2, 3]),
    cached=TimedLoop(ms=[100.0, 100.0, 100.0], context=[4, 5, 6], ids=[1, 2, 3]),
    batch=[Sample(1, [20.0]), Sample(4, [40.0])],
    batch_context=8,
    request=TimedLoop(ms=[100.0, 20.0, 20.0, 20.0], context=[8, 9, 10, 11], ids=[1, 2, 3, 4]),
)


def test_headline_quotes_the_machine_and_its_measured_limits():
    text = headline(measured(**FULL))
    assert text.startswith("**a test CPU**, float32, tiny model: measured in 12 s (quick plan).")
    assert "Memory bandwidth **10.0 GB/s**" in text and "matmul peak **100 GFLOP/s**" in text
    assert "weights read per decode step **500 MB** (125.0 M params)" in text


def test_a_measurement_cancelled_before_the_limits_says_so():
    assert headline(measured()) == "*Cancelled after 12 s, before the machine's limits were measured.*"
    assert captions(measured()) == ("", "", "", "", "")


def test_captions_compare_prefill_with_decode_per_token():
    _, phases, _, _, _ = captions(measured(**FULL))
    assert phases.startswith("Prefill of 64 tokens took 640 ms, 10.0 ms per token, while one decode step took")


def test_captions_compare_the_naive_loop_with_the_kv_cache():
    _, _, cache, _, _ = captions(measured(**FULL))
    assert "took 0.6 s re-running the whole sequence each step and 0.3 s with the KV cache (2.0× faster)" in cache
    assert "(200 → 300 ms)" in cache and cache.endswith("Both loops chose the same tokens.")


def test_captions_read_the_batch_gain_off_the_batch_sweep():
    _, _, _, batch, _ = captions(measured(**FULL))
    assert batch == (
        "One step for 4 sequences took 40 ms against 20 ms for one: 2.0× the time for 4× the tokens, "
        "100 tokens/s instead of 50."
    )


def test_the_request_caption_splits_time_to_first_token_from_the_rest():
    request = captions(measured(**FULL))[-1]
    assert request.startswith("Time to first token 100 ms, time per output token 20.0 ms, end-to-end 0.16 s")
    assert "for a 8-token prompt and 4 output tokens" in request and "Scaled down" in request
