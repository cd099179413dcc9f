"""The static-cache path writes the eager path's tokens and generate()'s, steps back exactly, feeds forced tokens,
and its one-token step is one graph whatever the position (nothing the host decides per step)."""

import copy

import pytest
import torch

from decoding import static as static_module
from decoding.lens import lens_run
from decoding.loop import Run, run_to_end
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.static import StaticStep, can_capture, check_capturable, static_kind
from tests.helpers.fidelity import FIDELITY, GREEDY, generate_ids


@pytest.fixture(scope="module")
def prompt(tiny):
    return encode_prompt(tiny.tokenizer, "Tell me a story.", chat=True)


def _static(lm, prompt, **kwargs) -> Run:
    """A static run, its step captured where this device can (the static step as it is on a CPU)."""
    run = Run(lm, prompt, path=static_kind(lm), **kwargs)
    run.prefill()
    return run


@pytest.mark.parametrize(("settings", "seed"), FIDELITY[:5], ids=lambda v: str(v) if isinstance(v, int) else None)
def test_static_path_writes_the_eager_paths_tokens_and_generates(tiny, prompt, settings, seed):
    static = run_to_end(tiny, prompt, settings, seed=seed, max_new_tokens=24, path=static_kind(tiny))
    assert static.token_ids == run_to_end(tiny, prompt, settings, seed=seed, max_new_tokens=24).token_ids
    assert static.token_ids == generate_ids(tiny, prompt, settings, seed, 24)


def test_static_steps_record_their_kind_and_a_cache_sized_up_front(tiny, prompt):
    run = _static(tiny, prompt, max_new_tokens=6)
    steps = [run.step(GREEDY) for _ in range(3)]
    assert (steps[0].phase, steps[0].pass_kind, steps[0].pass_mode) == ("prefill", "eager", "solo")  # the prompt
    assert {(s.pass_kind, s.pass_mode) for s in steps[1:]} == {
        ("captured" if can_capture(tiny.device) else "static", "solo")
    }
    assert run.static.max_len == len(prompt.ids) + 6
    assert len({s.kv_bytes for s in steps}) == 1  # allocated once, for prompt + max new tokens


def test_static_back_then_step_equals_a_straight_run(tiny, prompt):
    s = SamplerSettings(temperature=1.2)
    straight = run_to_end(tiny, prompt, s, seed=5, max_new_tokens=8, path=static_kind(tiny)).token_ids
    run = _static(tiny, prompt, seed=5, max_new_tokens=8)
    for _ in range(5):
        run.step(s)
    run.back()
    run.back()
    assert run.static.length == len(run.ids) == len(prompt.ids) + 3
    while not run.done:
        run.step(s)
    assert run.generated == straight


def test_static_back_to_the_start_prefills_again(tiny, prompt):
    run = _static(tiny, prompt, seed=2)
    first = run.step(SamplerSettings())
    run.back()
    assert run.static.length == len(prompt.ids) and run.cache is run.static.cache
    again = run.step(SamplerSettings())
    assert again.token_id == first.token_id and again.phase == "prefill"


def test_a_forced_token_is_fed_to_the_static_step(tiny, prompt):
    static, dynamic = _static(tiny, prompt), Run(tiny, prompt)
    dynamic.prefill()
    low = int(static.logits.argsort()[0])  # the least likely token: nobody would pick it
    for run in (static, dynamic):
        run.step(GREEDY, force_id=low)
    assert static.static.length == len(static.ids) and static.ids[-1] == low
    torch.testing.assert_close(static.logits, dynamic.logits, rtol=1e-4, atol=1e-4)
    assert static.step(GREEDY).token_id == dynamic.step(GREEDY).token_id


def test_the_lens_keeps_its_own_eager_pass_on_a_static_run(tiny, prompt):
    run = _static(tiny, prompt)
    run.step(GREEDY)
    pending = run.logits.clone()
    lens = lens_run(run)
    assert run.static.length == len(run.ids) and lens.final_id == int(pending.argmax())
    torch.testing.assert_close(run.logits, pending, rtol=1e-4, atol=1e-4)


def test_the_static_step_is_one_graph_whatever_the_position(tiny):
    # dynamo traces the whole step with fullgraph=True: a .item(), a host-built mask or a Python branch on the
    # position would break the graph or recompile it at the next position. The CPU's stand-in for a CUDA capture.
    graphs = []

    def count(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    step = StaticStep(tiny, 16, capture=False)
    eager = [step.feed([5, 6, 7], 0)]
    traced = torch.compile(step._one, backend=count, fullgraph=True)
    for token in (8, 9, 10):
        with torch.inference_mode():
            step.token.fill_(token)
            eager.append(traced()[0])  # (V,)
    assert len(graphs) == 1 and step.length == 6
    step.rewind(3)
    for i, token in enumerate((8, 9, 10)):
        torch.testing.assert_close(step.step(token), eager[i + 1])


HOST_READS = ("item", "tolist", "__bool__", "__int__", "__index__", "__float__", "nonzero", "numpy")


def test_the_static_step_never_reads_a_tensor_on_the_host(tiny, monkeypatch):
    # a CUDA graph cannot wait for the host: a value read back (.item(), a branch on a tensor) would break capture.
    # Dynamo's trace above takes transformers' compiling branches; this checks the eager code the graph records.
    step = StaticStep(tiny, 16, capture=False)
    step.feed([5, 6, 7], 0)
    reads = []
    for name in HOST_READS:
        original = getattr(torch.Tensor, name)
        monkeypatch.setattr(
            torch.Tensor, name, lambda t, *a, _n=name, _f=original, **k: reads.append(_n) or _f(t, *a, **k)
        )
    assert bool(torch.tensor(True)) and reads == ["__bool__"]  # the probe sees a read
    reads.clear()
    with torch.inference_mode():
        step.token.fill_(8)
        step._one()
    monkeypatch.undo()
    assert reads == [] and step.length == 4


def test_static_arguments_are_checked(tiny, prompt):
    with pytest.raises(ValueError, match="path must be one of eager, static, captured, got 'graph'"):
        Run(tiny, prompt, path="graph")
    with pytest.raises(ValueError, match="runs its own passes"):
        Run(tiny, prompt, path="static", scheduler=object())
    if not can_capture(tiny.device):
        with pytest.raises(ValueError, match="a CUDA graph needs a CUDA device"):
            StaticStep(tiny, 16, capture=True)
        with pytest.raises(ValueError, match="a CUDA graph needs a CUDA device"):
            Run(tiny, prompt, path="captured")
    with pytest.raises(ValueError, match="do not fit the static cache of 4"):
        StaticStep(tiny, 4).feed([1, 2, 3, 4, 5], 0)


def _sliding_cache(lm, max_len: int):
    """The tiny model's static cache with its first layer a sliding window's (as Mistral or Gemma build theirs)."""
    from transformers import StaticCache

    config = copy.deepcopy(lm.model.config)
    config.layer_types, config.sliding_window = ["sliding_attention", "full_attention"], 8
    return StaticCache(config=config, max_cache_len=max_len)


def test_a_graph_is_refused_a_cache_whose_layers_decide_on_the_host(tiny):
    from transformers import StaticLayer

    check_capturable(StaticStep(tiny, 16, capture=False).cache)  # plain StaticLayers: capturable
    with pytest.raises(ValueError, match="plain StaticLayers .* layer 0 is a StaticSlidingWindowLayer: run"):
        check_capturable(_sliding_cache(tiny, 16))

    class Patched(StaticLayer):  # any subclass may branch on the host: refused too
        pass

    cache = StaticStep(tiny, 16, capture=False).cache
    cache.layers[1] = Patched(max_cache_len=16)
    with pytest.raises(ValueError, match="layer 1 is a Patched"):
        check_capturable(cache)


def test_a_static_step_captures_only_what_a_graph_can_replay(tiny, monkeypatch):
    # as on CUDA: the device can capture, but this model's cache has a sliding-window layer
    monkeypatch.setattr(static_module, "can_capture", lambda device: True)
    monkeypatch.setattr(static_module, "_allocated_cache", _sliding_cache)
    with pytest.raises(ValueError, match="plain StaticLayers"):
        StaticStep(tiny, 16, capture=True)  # refused before any CUDA call
    step = StaticStep(tiny, 16)  # by default: runs uncaptured instead
    assert not step.captured and step.pool_bytes == 0
    assert static_kind(tiny) == "static"  # and a static run of it takes the step as it is
    from transformers import StaticCache

    monkeypatch.setattr(static_module, "_allocated_cache", lambda lm, n: StaticCache(lm.model.config, max_cache_len=n))
    assert static_kind(tiny) == "captured"  # plain StaticLayers, on a device that can capture
    with pytest.raises(ValueError, match="capture error mode must be one of thread_local, global, relaxed"):
        StaticStep(tiny, 16, error_mode="local")


def test_a_graphs_pool_is_its_own_segments_or_else_what_the_capture_reserved(monkeypatch):
    class Graph:
        def pool(self):
            return (0, 7)

    segments = [
        {"total_size": 2 << 20, "segment_pool_id": (0, 7)},  # the graph's
        {"total_size": 20 << 20, "segment_pool_id": (0, 0)},  # the allocator's common pool: another thread's, say
        {"total_size": 1 << 20, "segment_pool_id": (0, 7)},
    ]
    monkeypatch.setattr(torch.cuda, "memory_snapshot", lambda: segments)
    assert static_module._graph_pool_bytes(Graph(), reserved_growth=23 << 20) == 3 << 20
    # a torch whose snapshot names no pools: what the capture added to the reserved memory (never below 0)
    monkeypatch.setattr(torch.cuda, "memory_snapshot", lambda: [{"total_size": 2 << 20}])
    assert static_module._graph_pool_bytes(Graph(), reserved_growth=4 << 20) == 4 << 20
    assert static_module._graph_pool_bytes(Graph(), reserved_growth=-(1 << 20)) == 0


def test_the_steps_tensors_never_move_across_steps_back_and_forced_passes(tiny, prompt):
    # a captured graph replays fixed addresses: the cache's keys, values and length, the input buffer
    step = StaticStep(tiny, len(prompt.ids) + 16, capture=False)
    at_start = step.addresses()
    logits = step.feed(prompt.ids, 0)
    for _ in range(8):
        logits = step.feed([int(logits.argmax())], step.length)
    step.rewind(step.length - 5)
    step.feed([5, 6, 7], step.length)  # forced tokens: one eager pass on the same cache
    step.feed([8], step.length)
    assert step.addresses() == at_start and len(at_start["keys"]) == tiny.model.config.num_hidden_layers


@pytest.mark.skipif(not torch.cuda.is_available(), reason="a CUDA graph needs a GPU")
def test_the_captured_step_writes_the_uncaptured_steps_tokens_on_cuda():
    from decoding.models import TINY, load_model

    lm = load_model(TINY, device="cuda", dtype="float32")
    prompt = encode_prompt(lm.tokenizer, "Tell me a story.", chat=True)
    captured, plain = StaticStep(lm, 40, capture=True), StaticStep(lm, 40, capture=False)
    assert captured.pool_bytes > 0 and plain.pool_bytes == 0  # the graph's own memory, counted by the store
    a, b = captured.feed(prompt.ids, 0), plain.feed(prompt.ids, 0)
    for _ in range(12):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
        token = int(a.argmax())
        a, b = captured.feed([token], captured.length), plain.feed([token], plain.length)


@pytest.mark.bundled
@pytest.mark.parametrize(("settings", "seed"), [(GREEDY, 0), (SamplerSettings(temperature=0.7, top_p=0.9), 1)])
def test_bundled_static_path_writes_the_eager_paths_tokens_and_generates(bundled, settings, seed):
    prompt = encode_prompt(bundled.tokenizer, "What is the capital of France?", chat=True)
    static = run_to_end(bundled, prompt, settings, seed=seed, max_new_tokens=24, path=static_kind(bundled))
    assert static.token_ids == run_to_end(bundled, prompt, settings, seed=seed, max_new_tokens=24).token_ids
    assert static.token_ids == generate_ids(bundled, prompt, settings, seed, 24)
