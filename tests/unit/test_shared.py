"""A complete measurement is kept for everyone on the server, under its machine, model, dtype and plan."""

from types import SimpleNamespace

from decoding.timing.shared import SharedMeasurements


def test_a_complete_measurement_is_kept_and_handed_out_under_its_key():
    shared = SharedMeasurements()
    key = shared.key("AMD EPYC CPU, 2 threads", "smollm2-135m", "float32", "quick")
    assert shared.get(key) is None
    m = SimpleNamespace(cancelled=False, seconds=31.0)
    kept = shared.keep(key, m, at=0.0)
    assert shared.get(key) is kept and kept.measurements is m
    assert shared.get(shared.key("AMD EPYC CPU, 2 threads", "smollm2-135m", "bfloat16", "quick")) is None


def test_a_cancelled_measurement_is_never_kept():
    shared = SharedMeasurements()
    key = shared.key("cpu", "tiny", "float32", "quick")
    assert shared.keep(key, SimpleNamespace(cancelled=True)) is None
    assert shared.get(key) is None


def test_re_measuring_replaces_what_was_kept():
    shared = SharedMeasurements()
    key = shared.key("cpu", "tiny", "float32", "quick")
    shared.keep(key, SimpleNamespace(cancelled=False), at=1.0)
    newer = shared.keep(key, SimpleNamespace(cancelled=False), at=2.0)
    assert shared.get(key) is newer and newer.at == 2.0
