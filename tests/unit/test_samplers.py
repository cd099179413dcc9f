"""Each sampler equals its transformers class exactly and never edits its input; a bad value is rejected clearly, by
its stage's range where the pipeline runs it."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.generation.logits_process import (
    EpsilonLogitsWarper,
    EtaLogitsWarper,
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
    TypicalLogitsWarper,
)

from decoding import samplers, stages
from decoding.pipeline import apply_stage
from decoding.samplers import apply_mask

INF = float("inf")
# a few values make ties likely; -inf entries are tokens an earlier stage already removed
TIE_VALUES = [-INF, -4.0, -1.5, 0.0, 0.25, 1.0, 2.0, 3.5]
PROPERTY = settings(max_examples=150, deadline=None)


def _row(values):
    # at least one finite logit per row: an all -inf row is not a distribution
    return values if any(math.isfinite(v) for v in values) else [*values[:-1], 0.0]


@st.composite
def logits(draw, min_vocab=1, max_vocab=12):
    """(V,) or (B, V) float32 logits, half the time from a small set of values (ties), with -inf entries."""
    vocab = draw(st.integers(min_vocab, max_vocab))
    batch = draw(st.sampled_from([None, 1, 2, 3]))
    floats = st.floats(-20, 20, width=32) | st.just(-INF)
    value = draw(st.sampled_from([st.sampled_from(TIE_VALUES), floats]))
    rows = [_row(draw(st.lists(value, min_size=vocab, max_size=vocab))) for _ in range(batch or 1)]
    x = torch.tensor(rows, dtype=torch.float32)  # (B, V)
    return x[0] if batch is None else x


def _reference(warper, x: torch.Tensor, ids: torch.Tensor | None = None) -> torch.Tensor:
    """The transformers class on (B, V) rows; (V,) goes in as one row."""
    rows = x.unsqueeze(0) if x.dim() == 1 else x
    if ids is None:
        ids = torch.zeros(rows.shape[0], 1, dtype=torch.long)
    out = warper(ids, rows.clone())
    return out[0] if x.dim() == 1 else out


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    # torch.equal treats -inf == -inf as equal, which is what "removed in both" means
    return a.shape == b.shape and torch.equal(a, b)


def _check_filter(mask_fn, warper, x, value):
    before = x.clone()
    ours = apply_mask(x, mask_fn(x, value))
    assert torch.equal(x, before), "the filter changed its input in place"
    assert _same(ours, _reference(warper(value), x)), (x, value)


@PROPERTY
@given(x=logits(), k=st.integers(1, 15))
def test_top_k_equals_transformers(x, k):
    _check_filter(samplers.top_k_mask, lambda v: TopKLogitsWarper(v, min_tokens_to_keep=1), x, k)


@PROPERTY
@given(x=logits(), p=st.floats(0, 1, exclude_min=True, exclude_max=True) | st.sampled_from([0.1, 0.5, 0.6, 0.9]))
def test_top_p_equals_transformers(x, p):
    _check_filter(samplers.top_p_mask, lambda v: TopPLogitsWarper(v, min_tokens_to_keep=1), x, p)


@PROPERTY
@given(x=logits(), min_p=st.floats(0, 1, exclude_min=True, exclude_max=True) | st.sampled_from([0.05, 0.1, 0.5]))
def test_min_p_equals_transformers(x, min_p):
    _check_filter(samplers.min_p_mask, lambda v: MinPLogitsWarper(v, min_tokens_to_keep=1), x, min_p)


@PROPERTY
@given(x=logits(), mass=st.floats(0, 1, exclude_min=True, exclude_max=True) | st.sampled_from([0.2, 0.9, 0.95]))
def test_typical_equals_transformers(x, mass):
    _check_filter(samplers.typical_mask, lambda v: TypicalLogitsWarper(v, min_tokens_to_keep=1), x, mass)


@PROPERTY
@given(x=logits(), eps=st.floats(0, 1, exclude_min=True, exclude_max=True) | st.sampled_from([3e-4, 0.01, 0.2]))
def test_epsilon_equals_transformers(x, eps):
    _check_filter(samplers.epsilon_mask, lambda v: EpsilonLogitsWarper(v, min_tokens_to_keep=1), x, eps)


@PROPERTY
@given(x=logits(), eta=st.floats(0, 1, exclude_min=True, exclude_max=True) | st.sampled_from([3e-4, 0.01, 0.2]))
def test_eta_equals_transformers(x, eta):
    _check_filter(samplers.eta_mask, lambda v: EtaLogitsWarper(v, min_tokens_to_keep=1), x, eta)


@PROPERTY
@given(x=logits(), t=st.floats(0.01, 100, exclude_min=False) | st.sampled_from([0.5, 0.7, 1.0, 1.5]))
def test_temperature_equals_transformers(x, t):
    before = x.clone()
    ours = samplers.apply_temperature(x, t)
    assert torch.equal(x, before)
    assert _same(ours, _reference(TemperatureLogitsWarper(float(t)), x))


@PROPERTY
@given(x=logits(), penalty=st.floats(0.05, 5) | st.sampled_from([0.5, 1.2, 1.3, 2.0]), data=st.data())
def test_repetition_penalty_equals_transformers(x, penalty, data):
    rows, vocab = (1 if x.dim() == 1 else x.shape[0]), x.shape[-1]
    length = data.draw(st.integers(0, 8))
    ids = [data.draw(st.lists(st.integers(0, vocab - 1), min_size=length, max_size=length)) for _ in range(rows)]
    ids_tensor = torch.tensor(ids, dtype=torch.long).reshape(rows, length)  # (B, L)
    before = x.clone()
    ours = samplers.apply_repetition_penalty(x, ids[0] if x.dim() == 1 else ids, penalty)
    assert torch.equal(x, before)
    assert _same(ours, _reference(RepetitionPenaltyLogitsProcessor(float(penalty)), x, ids_tensor))


@PROPERTY
@given(x=logits(), presence=st.floats(-2, 2), frequency=st.floats(-2, 2), data=st.data())
def test_presence_frequency_penalty_follows_openai_rule(x, presence, frequency, data):
    vocab = x.shape[-1]
    ids = data.draw(st.lists(st.integers(0, vocab - 1), max_size=10))
    rows = x.unsqueeze(0) if x.dim() == 1 else x
    before = x.clone()
    seen = [ids] * rows.shape[0] if x.dim() == 2 else ids
    # the pipeline's order: frequency, then presence (decoding.stages.PENALTIES)
    ours = samplers.apply_presence_penalty(samplers.apply_frequency_penalty(x, seen, frequency), seen, presence)
    assert torch.equal(x, before)
    expected = rows.clone()
    for token in set(ids):
        count = ids.count(token)
        expected[:, token] = rows[:, token] - (frequency * count + presence)
    torch.testing.assert_close(ours, expected[0] if x.dim() == 1 else expected, rtol=1e-6, atol=1e-5)


# --- hand-worked 4-token examples -------------------------------------------------------------


def test_repetition_penalty_divides_positive_and_multiplies_negative_logits():
    x = torch.tensor([2.0, -2.0, 1.0, -1.0])
    out = samplers.apply_repetition_penalty(x, [0, 1, 1], 2.0)
    assert out.tolist() == [1.0, -4.0, 1.0, -1.0]  # seen tokens 0 and 1 are penalised once each


def test_presence_counts_once_and_frequency_counts_every_occurrence():
    x = torch.tensor([1.0, 1.0, 1.0, 1.0])
    out = samplers.apply_presence_penalty(samplers.apply_frequency_penalty(x, [2, 2, 2, 0], 0.25), [2, 2, 2, 0], 0.5)
    # token 2: 1 - 0.5 - 3 * 0.25; token 0: 1 - 0.5 - 0.25; tokens 1 and 3 unseen
    assert out.tolist() == [0.25, 1.0, -0.25, 1.0]


def test_top_k_keeps_every_token_tied_with_the_kth():
    assert samplers.top_k_mask(torch.tensor([3.0, 1.0, 1.0, 0.0]), 2).tolist() == [True, True, True, False]


def test_top_p_keeps_the_smallest_set_reaching_p():
    x = torch.tensor([0.5, 0.3, 0.1, 0.1]).log()
    assert samplers.top_p_mask(x, 0.6).tolist() == [True, True, False, False]
    assert samplers.top_p_mask(x, 0.5).tolist() == [True, False, False, False]


def test_min_p_scales_the_threshold_by_the_top_probability():
    x = torch.tensor([0.5, 0.3, 0.1, 0.1]).log()
    # threshold 0.3 * 0.5 = 0.15: the 0.1s go
    assert samplers.min_p_mask(x, 0.3).tolist() == [True, True, False, False]


def test_epsilon_never_removes_the_top_token():
    x = torch.tensor([0.25, 0.25, 0.25, 0.25]).log()
    assert samplers.epsilon_mask(x, 0.5).tolist() == [True, True, True, True]  # all tied with the top


def test_temperature_divides_the_logits():
    assert samplers.apply_temperature(torch.tensor([2.0, -1.0, 0.0, 4.0]), 2.0).tolist() == [1.0, -0.5, 0.0, 2.0]


def test_apply_mask_sets_removed_tokens_to_minus_infinity_in_a_new_tensor():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    out = apply_mask(x, torch.tensor([True, False, True, False]))
    assert out.tolist() == [1.0, -INF, 3.0, -INF]
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0]


# --- disabled and bad values ------------------------------------------------------------------

DISABLED_FILTERS = [
    (samplers.top_k_mask, 0),
    (samplers.top_p_mask, 1.0),
    (samplers.min_p_mask, 0.0),
    (samplers.typical_mask, 1.0),
    (samplers.epsilon_mask, 0.0),
    (samplers.eta_mask, 0.0),
]


@pytest.mark.parametrize(("mask_fn", "value"), DISABLED_FILTERS)
@pytest.mark.parametrize("shape", [(4,), (2, 4)])
def test_disabled_filter_keeps_everything(mask_fn, value, shape):
    x = torch.tensor([5.0, -INF, 0.0, -3.0]).expand(shape).clone()
    keep = mask_fn(x, value)
    assert keep.dtype == torch.bool and keep.shape == x.shape and bool(keep.all())


def test_neutral_penalties_leave_logits_unchanged_in_a_new_tensor():
    x = torch.tensor([2.0, -2.0, 1.0, -INF])
    for out in (
        samplers.apply_repetition_penalty(x, [0, 1, 3], 1.0),
        samplers.apply_frequency_penalty(x, [0, 1, 3], 0.0),
        samplers.apply_presence_penalty(x, [0, 1, 3], 0.0),
        samplers.apply_temperature(x, 1.0),
    ):
        assert torch.equal(out, x) and out is not x


NAN = float("nan")


def _through(stage):
    # a stage's value is checked where the pipeline runs it (the samplers read no stage); temperature's math also
    # refuses what it cannot divide by
    return lambda x, v: apply_stage(stage, x, [0], v)


BAD_VALUES = [
    (_through(stages.TOP_K), -1, "top_k", "integer >= 0"),
    (_through(stages.TOP_K), 1.5, "top_k", "integer >= 0"),
    (_through(stages.TOP_K), True, "top_k", "integer >= 0"),
    (_through(stages.TOP_P), 0.0, "top_p", "in (0, 1]"),
    (_through(stages.TOP_P), 1.5, "top_p", "in (0, 1]"),
    (_through(stages.TOP_P), NAN, "top_p", "in (0, 1]"),
    (_through(stages.MIN_P), 1.0, "min_p", "in [0, 1)"),
    (_through(stages.MIN_P), -0.1, "min_p", "in [0, 1)"),
    (_through(stages.MIN_P), NAN, "min_p", "in [0, 1)"),
    (_through(stages.TYPICAL), 0.0, "typical_p", "in (0, 1]"),
    (_through(stages.TYPICAL), NAN, "typical_p", "in (0, 1]"),
    (_through(stages.EPSILON), -0.01, "epsilon", "in [0, 1)"),
    (_through(stages.EPSILON), 1.0, "epsilon", "in [0, 1)"),
    (_through(stages.ETA), -0.01, "eta", "in [0, 1)"),
    (_through(stages.ETA), NAN, "eta", "in [0, 1)"),
    (samplers.apply_temperature, 0.0, "temperature", "> 0"),
    (samplers.apply_temperature, -1.0, "temperature", "> 0"),
    (samplers.apply_temperature, NAN, "temperature", "> 0"),
    (samplers.apply_temperature, INF, "temperature", "> 0"),
    (_through(stages.TEMPERATURE), INF, "temperature", "[0.01, 100]"),
    (_through(stages.TEMPERATURE), 0.001, "temperature", "[0.01, 100]"),
    (_through(stages.REPETITION), 0.0, "repetition_penalty", "> 0"),
    (_through(stages.REPETITION), -1.2, "repetition_penalty", "> 0"),
    (_through(stages.REPETITION), NAN, "repetition_penalty", "> 0"),
    (_through(stages.PRESENCE), 2.5, "presence_penalty", "[-2, 2]"),
    (_through(stages.FREQUENCY), NAN, "frequency_penalty", "[-2, 2]"),
]


@pytest.mark.parametrize(("fn", "value", "name", "allowed"), BAD_VALUES)
def test_out_of_range_value_raises_naming_value_and_range(fn, value, name, allowed):
    with pytest.raises(ValueError) as err:
        fn(torch.zeros(4), value)
    message = str(err.value)
    assert name in message and allowed in message and repr(value) in message
