"""The regime map: its sizes are the family's real shapes, it builds random models of them, and it returns plain
data (it may run in a process of its own), stopping when asked."""

import fcntl
import math
import pickle
from dataclasses import asdict
from statistics import median

import pytest
import torch

from decoding.models import LoadedModel
from decoding.timing import regimes
from decoding.timing.regimes import BUNDLED_SHAPE, SIZES, Size, random_model, regime_map, sizes_for, step_times
from decoding.timing.shape import model_shape
from decoding.watch import Watch

TINY_SIZES = (Size("tiny-a", 64, 128, 2, 4, 2, 259), Size("tiny-b", 128, 256, 2, 4, 2, 259, tied=False))
CPU = torch.device("cpu")


@pytest.fixture(autouse=True)
def own_machine_lock(tmp_path, monkeypatch):
    """Each test's maps take a lock of their own: the machine's is for maps that build real sizes (an app server of
    the same test run may hold it for a minute)."""
    monkeypatch.setattr(regimes, "MACHINE_LOCK", tmp_path / "regime-map.lock")


def _on_meta(size: Size) -> LoadedModel:
    from transformers import LlamaForCausalLM

    with torch.device("meta"):
        model = LlamaForCausalLM(size.config())
    return LoadedModel(model, None, size.name, size.name, torch.device("meta"), torch.float32, 0.0)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: s.name)
def test_a_sizes_count_of_the_bytes_a_step_reads_is_the_built_models(size):
    # counted on meta tensors: nothing is allocated, the 34B shape included
    shape = model_shape(_on_meta(size))
    assert size.params_read == shape.params_read
    assert size.held_bytes(4) == sum(p.numel() for p in _on_meta(size).model.parameters()) * 4


@pytest.mark.bundled
def test_the_bundled_shape_is_the_bundled_models_own(bundled):
    assert model_shape(random_model(BUNDLED_SHAPE, bundled.device, bundled.dtype)) == model_shape(bundled)
    config = bundled.model.config
    assert BUNDLED_SHAPE.rope_theta == config.rope_parameters["rope_theta"]


def test_a_random_model_decodes_and_a_cpu_has_no_launches_to_count():
    lm = random_model(TINY_SIZES[1], CPU, torch.float32)
    assert lm.model.lm_head.weight is not lm.model.model.embed_tokens.weight  # untied, as its config says
    ms, launched = step_times(lm, "eager", steps=3, warmup=1, watch=Watch())
    assert len(ms) == 3 and all(t > 0 for t in ms) and launched is None
    tied = random_model(TINY_SIZES[0], CPU, torch.float32).model
    assert tied.lm_head.weight is tied.model.embed_tokens.weight


def test_sizes_that_do_not_fit_or_need_a_gpu_are_left_out_with_why():
    chosen, skipped = sizes_for(CPU, 4, free=4_000_000_000)
    assert [s.name for s in chosen] == ["SmolLM2-135M", "SmolLM2-360M"]
    assert skipped[0] == "SmolLM2-1.7B: 6.8 GB of weights, 4.0 GB free"
    assert "Llama-2-7B: measured on a GPU only" in skipped


def test_the_map_is_plain_data_that_pickles(monkeypatch):
    monkeypatch.setattr(regimes, "SIZES", TINY_SIZES)
    m = regime_map("cpu", "float32", steps=2, warmup=1)
    assert [(p.size, p.path) for p in m.points] == [
        ("tiny-a", "eager"),
        ("tiny-a", "static"),  # the static cache's step, uncaptured: a path on every device
        ("tiny-b", "eager"),
        ("tiny-b", "static"),
    ]
    assert m.bandwidth_gbs > 0 and not m.cancelled and "no kernel launch" in m.launches_note
    assert all(p.weight_bytes > 0 and math.isfinite(p.mbu) and p.launches_per_step is None for p in m.points)
    assert all(p.decode_ms_per_token == median(p.ms) and len(p.ms) == 2 for p in m.points)
    assert pickle.loads(pickle.dumps(m)) == m
    assert "Tensor" not in repr(asdict(m))


def test_cancel_keeps_what_was_measured(monkeypatch):
    monkeypatch.setattr(regimes, "SIZES", TINY_SIZES)
    done = []
    watch = Watch(on_progress=lambda f, msg: done.append(msg), should_stop=lambda: "tiny-b shape" in " ".join(done))
    m = regime_map("cpu", "float32", steps=2, warmup=0, watch=watch)
    assert m.cancelled and [p.size for p in m.points] == ["tiny-a", "tiny-a"]


def test_the_static_path_is_timed_on_any_device_and_a_path_is_named_among_three():
    # eager -> static is the static cache's part of the speed-up, static -> captured the graph's
    lm = random_model(TINY_SIZES[0], CPU, torch.float32)
    ms, launched = step_times(lm, "static", steps=2, warmup=1, watch=Watch())
    assert len(ms) == 2 and all(t > 0 for t in ms) and launched is None
    with pytest.raises(ValueError, match="path must be one of eager, static, captured, got 'graph'"):
        regimes.path_step(lm, "graph", [5, 6, 7], room=3)


def test_the_captured_path_needs_cuda():
    if torch.cuda.is_available():
        pytest.skip("this machine can capture")
    with pytest.raises(ValueError, match="captured on CUDA only"):
        regime_map("cpu", "float32", paths=("captured",))


def test_the_benchmark_keeps_this_machine_beside_the_figure_its_mbus_are_against(monkeypatch):
    from bench import gpu_decode
    from decoding.timing.limits import Probe
    from decoding.timing.machine import MachineFigure

    copy, matmul = Probe(12.5, "GB/s", [1.0], 1e9, "copy"), Probe(0.2, "TFLOP/s", [1.0], 1e9, "matmul")
    figure = MachineFigure("a test CPU", "float32", copy, matmul, at=0.0)
    mapped = regimes.RegimeMap("cpu", "a test CPU", "float32", bandwidth_gbs=12.5, machine=figure)
    monkeypatch.setattr(gpu_decode, "regime_map", lambda *args, **kwargs: mapped)
    out = gpu_decode.main(["--no-check"])
    assert out["machine"]["torch"] == torch.__version__ and len(out["machine"]["load_average"]) == 3
    assert out["machine_figure"]["bandwidth"]["value"] == out["bandwidth_gbs"] == 12.5


def test_a_second_map_on_the_machine_waits_for_the_first_saying_so_and_can_be_cancelled_while_it_waits(monkeypatch):
    monkeypatch.setattr(regimes, "SIZES", TINY_SIZES)
    said = []
    with open(regimes.MACHINE_LOCK, "a") as other:  # another process's map, under way
        fcntl.flock(other, fcntl.LOCK_EX)
        watch = Watch(on_progress=lambda f, msg: said.append(msg), should_stop=lambda: len(said) >= 3)
        m = regime_map("cpu", "float32", steps=1, warmup=0, watch=watch)
        assert m.cancelled and m.points == [] and m.machine is None
        assert said == ["waiting for another regime map on this machine to end (each needs its memory)"] * 3
        fcntl.flock(other, fcntl.LOCK_UN)
        m = regime_map("cpu", "float32", steps=1, warmup=0)  # the other one ended: this one runs
    assert not m.cancelled and [p.size for p in m.points] == ["tiny-a", "tiny-a", "tiny-b", "tiny-b"]
