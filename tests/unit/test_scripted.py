"""The packed pass run by TorchScript (decoding/serving/scripted.py) computes bit for bit what transformers' modules
compute for the same pass, writes each session's cache the same, and runs only where that holds."""

import copy
import warnings
import weakref

import pytest
import torch
import transformers
from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

from decoding.forward import forward_one
from decoding.models import TINY, load_model
from decoding.serving import ragged, scripted

PROMPTS = ([5, 9, 2, 7], [11, 3], [8, 8, 1, 4, 6, 2, 9, 10, 12], [3])
CHUNK = [4, 7, 1, 9, 3, 3]


def _sessions(lm):
    """Each prompt prefilled alone (its cache, its greedy next token), and one new session's empty cache."""
    ragged.install(lm)
    out = []
    for ids in PROMPTS:
        logits, cache = forward_one(lm, list(ids), None, 0)
        out.append((cache, [int(logits.argmax())], len(ids)))
    out.append((ragged.new_cache(lm), CHUNK, 0))  # a prompt's first chunk rides with the decode rows
    return out


def _pass(lm, sessions, use_script: bool):
    """Two packed passes over copies of `sessions` (decode rows and a prompt chunk, then one more token each):
    the second pass's logits and every session's cache after it."""
    caches = [copy.deepcopy(cache) for cache, _, _ in sessions]
    ragged.packed_forward(lm, [ragged.Segment(c, ids, at) for c, (_, ids, at) in zip(caches, sessions)], use_script)
    then = [ragged.Segment(c, [2], at + len(ids)) for c, (_, ids, at) in zip(caches, sessions)]
    return ragged.packed_forward(lm, then, use_script), caches


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_the_scripted_pass_is_bit_for_bit_the_modules_pass_and_grows_the_caches_alike(dtype):
    lm = load_model(TINY, device="cpu", dtype=dtype)
    sessions = _sessions(lm)
    assert scripted.fits(lm, [cache for cache, _, _ in sessions])
    mine, my_caches = _pass(lm, sessions, use_script=True)
    theirs, their_caches = _pass(lm, sessions, use_script=False)
    assert mine.shape == (len(sessions), lm.vocab_size)
    assert torch.equal(mine, theirs)
    for a, b in zip(my_caches, their_caches):
        for mine_layer, their_layer in zip(a.layers, b.layers, strict=True):
            assert type(mine_layer) is DynamicLayer and mine_layer.is_initialized
            assert torch.equal(mine_layer.keys, their_layer.keys) and torch.equal(mine_layer.values, their_layer.values)


@pytest.mark.bundled
def test_the_bundled_model_s_scripted_pass_is_bit_for_bit_its_modules_pass(bundled):
    sessions = _sessions(bundled)
    assert scripted.fits(bundled, [cache for cache, _, _ in sessions])
    assert torch.equal(_pass(bundled, sessions, use_script=True)[0], _pass(bundled, sessions, use_script=False)[0])


def test_the_scripted_pass_calls_none_of_the_model_s_layers(tiny, monkeypatch):
    sessions = _sessions(tiny)
    calls = []
    layer = tiny.model.model.layers[0]
    forward = layer.forward
    monkeypatch.setattr(layer, "forward", lambda *a, **k: calls.append(1) or forward(*a, **k))
    _pass(tiny, sessions, use_script=True)
    assert calls == []
    _pass(tiny, sessions, use_script=False)
    assert len(calls) == 2


def _counted(lm, sessions) -> int:
    """How many times the packed passes called the first decoder layer's forward (a hook counts them)."""
    calls = []
    handle = lm.model.model.layers[0].register_forward_hook(lambda *_: calls.append(1))
    try:
        _pass(lm, sessions, use_script=True)
    finally:
        handle.remove()
    return len(calls)


def test_a_model_with_a_hook_keeps_the_modules_pass_so_the_hook_sees_it(tiny):
    sessions = _sessions(tiny)
    assert _counted(tiny, sessions) == 2
    handle = tiny.model.model.layers[1].mlp.register_forward_pre_hook(lambda *_: None)
    try:
        assert not scripted.fits(tiny, [])
    finally:
        handle.remove()
    assert scripted.fits(tiny, [])


def test_transformers_own_output_capturing_hooks_leave_the_scripted_pass_in_place(tiny):
    ragged.install(tiny)
    with torch.inference_mode():  # as the logit lens asks: transformers hooks the layers for good the first time
        tiny.model(input_ids=torch.tensor([[5, 9, 2]]), output_hidden_states=True)
    assert any(layer._forward_hooks for layer in tiny.model.model.layers)
    sessions = _sessions(tiny)
    assert scripted.fits(tiny, [cache for cache, _, _ in sessions])
    assert torch.equal(_pass(tiny, sessions, use_script=True)[0], _pass(tiny, sessions, use_script=False)[0])


def test_other_layers_or_caches_keep_the_modules_pass(tiny):
    class Other(torch.nn.Linear):  # e.g. a quantized kernel (`--weights int8`): not a plain nn.Linear
        pass

    sessions = _sessions(tiny)
    caches = [cache for cache, _, _ in sessions]
    attn = tiny.model.model.layers[0].self_attn
    plain = attn.k_proj
    attn.k_proj = Other(plain.in_features, plain.out_features, bias=False)
    try:
        assert not scripted.fits(tiny, caches)
    finally:
        attn.k_proj = plain
    assert scripted.fits(tiny, caches)
    windowed = copy.deepcopy(caches[0])
    windowed.layers[0] = DynamicSlidingWindowLayer(sliding_window=4)
    assert not scripted.fits(tiny, [windowed])


def _one_row(lm):
    """One decode row's logits from forward_one (the path generate() agrees with), then from the scripted pass."""
    ragged.install(lm)
    ids = list(PROMPTS[2])
    logits, cache = forward_one(lm, ids, None, 0)
    token = [int(logits.argmax())]
    mine = copy.deepcopy(cache)
    alone = forward_one(lm, token, cache, len(ids))[0]
    assert scripted.fits(lm, [mine])
    return alone, ragged.packed_forward(lm, [ragged.Segment(mine, token, len(ids))])[0]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_one_decode_row_scripted_is_bit_for_bit_forward_one(dtype):
    alone, mine = _one_row(load_model(TINY, device="cpu", dtype=dtype))
    assert torch.equal(alone, mine)


@pytest.mark.bundled
def test_the_bundled_model_s_decode_row_scripted_is_bit_for_bit_forward_one(bundled):
    alone, mine = _one_row(bundled)
    assert torch.equal(alone, mine)


def test_cat_each_joins_each_group_as_torch_cat_does():
    groups = [[torch.randn(1, 2, n, 4) for n in (3, 1, 5)], [torch.randn(1, 2, 2, 4)]]
    joined = scripted.cat_each(groups, dim=2)
    assert [j.shape[2] for j in joined] == [9, 2]
    assert all(torch.equal(j, torch.cat(g, dim=2)) for j, g in zip(joined, groups))


def test_the_transformers_installed_is_the_one_the_scripted_pass_was_proven_on():
    """An upgrade test: after a new transformers, run this file's bit-for-bit tests, then move PROVEN_ON."""
    assert transformers.__version__ == scripted.PROVEN_ON, (
        f"decoding/serving/scripted.py copies transformers {scripted.PROVEN_ON}'s Llama layers, and "
        f"{transformers.__version__} is installed: check it bit for bit (this file) before moving PROVEN_ON"
    )


@pytest.fixture()
def another_transformers(monkeypatch):
    """As if the transformers installed were not the one the scripted pass was proven on; no verdict kept yet."""
    monkeypatch.setattr(scripted, "PROVEN_ON", "0.0.0")
    monkeypatch.setattr(scripted, "_proofs", weakref.WeakKeyDictionary())


def test_on_another_transformers_the_bits_are_checked_once_and_the_scripted_pass_runs_where_they_agree(
    tiny, another_transformers, monkeypatch
):
    with pytest.warns(RuntimeWarning, match=r"copies transformers 0\.0\.0's .* gave the same bits"):
        assert scripted.fits(tiny, [])
    checks = []
    monkeypatch.setattr(scripted, "_check", lambda lm: checks.append(lm) or False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert scripted.fits(tiny, [])  # the verdict is kept: no second check, no second warning
    assert checks == []


def test_on_another_transformers_whose_bits_differ_the_modules_pass_runs(tiny, another_transformers, monkeypatch):
    real = scripted.packed_forward
    calls = []

    def off_by_a_bit(*args):  # a release whose RMSNorm casts in another order: the last bits move
        calls.append(1)
        return real(*args) * (1 + 2**-20)

    monkeypatch.setattr(scripted, "packed_forward", off_by_a_bit)
    with pytest.warns(RuntimeWarning, match="other bits: it runs the modules' pass"):
        assert not scripted.fits(tiny, [])
    checked = len(calls)
    sessions = _sessions(tiny)
    _pass(tiny, sessions, use_script=True)  # asks for the scripted pass where it fits: it no longer does
    assert checked > 0 and len(calls) == checked
