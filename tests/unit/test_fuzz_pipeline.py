"""Random settings and random logits through the whole pipeline: it never empties the distribution,
its probabilities sum to 1, and it raises nothing but the documented ValueError."""

import math

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoding.pipeline import ORDERS, SamplerSettings, process, select

ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, width=32)
SETTINGS = st.fixed_dictionaries(
    {
        "temperature": st.one_of(st.just(0.0), st.floats(0.01, 5), ANY_FLOAT),
        "top_k": st.one_of(st.integers(-3, 60), st.just(1.5)),
        "top_p": st.one_of(st.floats(0.01, 1.0), ANY_FLOAT),
        "min_p": st.one_of(st.floats(0.0, 0.99), ANY_FLOAT),
        "typical_p": st.one_of(st.just(1.0), st.floats(0.05, 1.0)),
        "epsilon": st.one_of(st.just(0.0), st.floats(0.0, 0.5)),
        "eta": st.one_of(st.just(0.0), st.floats(0.0, 0.5)),
        "repetition_penalty": st.one_of(st.floats(0.5, 3.0), ANY_FLOAT),
        "presence_penalty": st.one_of(st.floats(-2, 2), ANY_FLOAT),
        "frequency_penalty": st.one_of(st.floats(-2, 2), ANY_FLOAT),
        "order": st.one_of(st.sampled_from(sorted(ORDERS)), st.text(max_size=5)),
    }
)
LOGITS = st.lists(st.one_of(st.floats(-30, 30, width=32), st.just(float("-inf"))), min_size=2, max_size=48).filter(
    lambda xs: any(math.isfinite(x) for x in xs)
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(SETTINGS, LOGITS, st.lists(st.integers(0, 47), max_size=12), st.integers(0, 2**31))
def test_pipeline_never_empties_and_only_raises_value_error(kwargs, values, history, seed):
    try:
        s = SamplerSettings(**kwargs)
    except ValueError as err:
        assert str(err)  # the documented error, with a message
        return
    logits = torch.tensor(values, dtype=torch.float32)
    ids = [i % len(values) for i in history]
    before = logits.clone()
    p = process(logits, s, ids, ids[len(ids) // 2 :])
    assert torch.equal(logits, before)  # nothing edited in place
    survivors = torch.isfinite(p.final)
    assert survivors.any(), "a pipeline must never remove every token"
    total = float(p.probs_after.sum())
    assert abs(total - 1.0) < 1e-4
    chosen = select(p.final, s, torch.Generator().manual_seed(seed))
    assert 0 <= chosen < len(values) and bool(survivors[chosen])
