"""The pipeline runs stages in a named order, records who removed what, and selects last."""

import re

import pytest
import torch

from decoding import samplers
from decoding.pipeline import ORDERS, SamplerSettings, process, select

# the example: probabilities [.5, .3, .1, .1]
EXAMPLE = torch.tensor([0.5, 0.3, 0.1, 0.1]).log()


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_order_changes_the_result_top_p_then_min_p_keeps_two():
    p = process(EXAMPLE, SamplerSettings(top_p=0.6, min_p=0.3, order="transformers"), [], [])
    assert p.stages == ("top_p", "min_p")
    assert p.kept == (2, 2)
    assert (p.removed_by == -1).tolist() == [True, True, False, False]


def test_order_changes_the_result_min_p_then_top_p_keeps_one():
    p = process(EXAMPLE, SamplerSettings(top_p=0.6, min_p=0.3, order="vllm"), [], [])
    assert p.stages == ("min_p", "top_p")
    assert p.kept == (2, 1)
    assert (p.removed_by == -1).tolist() == [True, False, False, False]


def test_every_order_names_every_stage_once():
    names = set(ORDERS["transformers"])
    for order in ORDERS.values():
        assert len(order) == len(set(order)) and set(order) == names


def test_llama_cpp_order_applies_temperature_after_the_truncations():
    order = ORDERS["llama.cpp"]
    assert order.index("temperature") > max(order.index(f) for f in ("top_k", "top_p", "min_p"))


def test_removed_by_records_the_first_stage_that_removed_each_token():
    x = torch.tensor([0.5, 0.3, 0.1, 0.06, 0.04]).log()
    p = process(x, SamplerSettings(top_k=3, top_p=0.6, min_p=0.01), [], [])
    assert p.stages == ("top_k", "top_p", "min_p")
    # top-k drops the last two; top-p (on the renormalised three) drops 0.1; min-p removes nothing more
    assert p.removed_by.tolist() == [-1, -1, 1, 0, 0]
    assert p.kept == (3, 2, 2)
    assert p.final[2:].tolist() == [float("-inf")] * 3 and torch.equal(p.final[:2], x[:2])


def test_each_stage_sees_the_survivors_of_the_one_before():
    # top-k 2 first: the survivors .5/.3 renormalise to .625/.375, so min-p 0.7 (threshold .4375) keeps one
    p = process(EXAMPLE, SamplerSettings(top_k=2, min_p=0.7), [], [])
    assert p.kept == (2, 1)


def test_process_leaves_its_input_unchanged():
    x = EXAMPLE.clone()
    process(x, SamplerSettings(temperature=0.5, top_k=2, repetition_penalty=1.5), [0, 1], [1])
    assert torch.equal(x, EXAMPLE)


def test_process_works_on_a_float32_copy_of_half_precision_logits():
    p = process(EXAMPLE.to(torch.bfloat16), SamplerSettings(), [], [])
    assert p.raw.dtype == torch.float32 and p.final.dtype == torch.float32


def test_default_settings_run_no_stage():
    p = process(EXAMPLE, SamplerSettings(), [0, 1], [1])
    assert p.stages == () and torch.equal(p.final, EXAMPLE)
    assert p.probs_after.tolist() == pytest.approx([0.5, 0.3, 0.1, 0.1])


def test_greedy_skips_every_warper_but_keeps_the_penalties():
    s = SamplerSettings(temperature=0, top_k=1, top_p=0.1, min_p=0.9, repetition_penalty=2.0)
    p = process(EXAMPLE, s, [0], [0])
    assert p.stages == ("repetition",)


def test_repetition_penalty_can_change_the_greedy_choice():
    x = torch.tensor([2.0, 1.9, -1.0, -1.0])
    s = SamplerSettings(temperature=0, repetition_penalty=1.5)
    assert select(process(x, SamplerSettings(temperature=0), [0], [0]).final, s, None) == 0
    assert select(process(x, s, [0], [0]).final, s, None) == 1  # 2.0 / 1.5 < 1.9


def test_presence_and_frequency_count_generated_tokens_only():
    x = torch.zeros(4)
    s = SamplerSettings(presence_penalty=1.0, frequency_penalty=0.5)
    p = process(x, s, all_ids=[3, 3, 3, 1], generated_ids=[1, 1])
    assert p.final.tolist() == [0.0, -2.0, 0.0, 0.0]  # token 3 is only in the prompt


def test_temperature_zero_ignores_seed():
    final = process(EXAMPLE, SamplerSettings(temperature=0, top_k=3), [], []).final
    generators = [_generator(seed) for seed in range(5)]
    states = [g.get_state() for g in generators]
    assert {select(final, SamplerSettings(temperature=0), g) for g in generators} == {0}
    # greedy never draws: every generator is exactly where it started
    assert all(torch.equal(g.get_state(), s) for g, s in zip(generators, states))


def test_select_with_the_same_seed_draws_the_same_token():
    s = SamplerSettings(temperature=1.5)
    final = process(torch.zeros(1000), s, [], []).final  # uniform over 1000: collisions by chance are rare
    first = [select(final, s, _generator(seed)) for seed in range(20)]
    assert first == [select(final, s, _generator(seed)) for seed in range(20)]
    assert len(set(first)) > 1  # different seeds really draw differently


def test_select_only_draws_survivors():
    s = SamplerSettings(top_k=2)
    final = process(EXAMPLE, s, [], []).final
    g = _generator(0)
    assert {select(final, s, g) for _ in range(200)} == {0, 1}


def test_sampling_draws_like_torch_multinomial_with_the_same_generator():
    # generate() draws with torch.multinomial on the softmax; the same seed must give the same token
    s = SamplerSettings(temperature=0.8)
    x = torch.randn(50, generator=_generator(1))
    final = process(x, s, [], []).final
    expected = torch.multinomial(torch.softmax(final, -1).unsqueeze(0), 1, generator=_generator(7))
    assert select(final, s, _generator(7)) == int(expected)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperature": -0.1}, "temperature must be 0 (greedy) or in [0.01, 100]"),
        ({"temperature": float("nan")}, "temperature must be 0 (greedy) or in [0.01, 100]"),
        ({"order": "random"}, "order must be one of"),
        ({"top_k": -1}, "top_k must be an integer >= 0"),
        ({"top_p": 0.0}, "top_p must be in (0, 1]"),
        ({"min_p": 1.0}, "min_p must be in [0, 1)"),
        ({"repetition_penalty": 0.0}, "repetition_penalty must be a finite number > 0"),
        ({"typical_p": 1.5}, "typical_p must be in (0, 1]"),
        ({"eta": -1.0}, "eta must be in [0, 1)"),
    ],
)
def test_bad_settings_fail_when_built(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        SamplerSettings(**kwargs)


def test_settings_are_checked_against_the_samplers_ranges_without_running_a_sampler(monkeypatch):
    def boom(*args):
        raise AssertionError("validation ran a sampler")

    for name in (
        "apply_repetition_penalty",
        "apply_frequency_penalty",
        "apply_presence_penalty",
        "top_k_mask",
        "top_p_mask",
    ):
        monkeypatch.setattr(samplers, name, boom)
    SamplerSettings(repetition_penalty=1.2, frequency_penalty=0.5, top_k=5, top_p=0.9)
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\] \(1 = off\), got 1.5"):
        SamplerSettings(top_p=1.5)
