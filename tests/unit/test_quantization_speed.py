"""Formats are timed in turns, warm-up excluded, each repeat's numbers kept."""

from decoding.quantization.model import quantize_model
from decoding.quantization.speed import measure_speed


def test_every_format_gets_one_prefill_and_one_decode_median_per_repeat(tiny):
    models = {f: quantize_model(tiny.model, f) for f in ("float32", "int8")}
    speeds = measure_speed(tiny, models, prefill_tokens=32, decode_tokens=3, repeats=2)
    assert list(speeds) == ["float32", "int8"]
    for s in speeds.values():
        assert len(s.prefill_ms) == 2 and len(s.decode_ms) == 2
        assert s.prefill_median > 0 and s.decode_median > 0
