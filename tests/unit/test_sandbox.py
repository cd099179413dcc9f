"""decoding/sandbox.py: each strategy alone, the engine orders, the temperature sweep and typed logits,
on hand-worked distributions."""

import math

import pytest
import torch

from decoding.pipeline import SamplerSettings
from decoding.sandbox import (
    MAX_VOCAB,
    compare_orders,
    each_strategy_alone,
    parse_logits,
    preset_logits,
    temperature_sweep,
)

FOUR = torch.tensor([0.5, 0.3, 0.1, 0.1]).log()  # logits whose softmax is [.5, .3, .1, .1]
EXERCISE_TOP = (10, 9.9, 9.8, 5, 4)  # the reference exercise; the other 31,995 logits are exactly 0


def by_name(results):
    return {r.name: r for r in results}


def test_each_strategy_alone_keeps_what_each_rule_allows_on_four_tokens():
    settings = SamplerSettings(temperature=2.0, top_k=2, top_p=0.4, min_p=0.15)
    r = by_name(each_strategy_alone(FOUR, settings, top_n=4))
    assert list(r) == ["greedy", "temperature", "top_k", "top_p", "min_p"]
    # greedy: the argmax alone; temperature never removes anything; top-k 2: .5 and .3;
    # top-p 0.4: .5 already reaches it; min-p 0.15: floor .075, all four clear it
    assert {n: x.kept for n, x in r.items()} == {"greedy": 1, "temperature": 4, "top_k": 2, "top_p": 1, "min_p": 4}
    assert {n: round(x.mass, 4) for n, x in r.items()} == {
        "greedy": 0.5,
        "temperature": 1.0,
        "top_k": 0.8,
        "top_p": 0.5,
        "min_p": 1.0,
    }
    assert r["top_k"].keeps == [True, True, False, False]
    assert r["top_k"].after == pytest.approx([0.625, 0.375, 0, 0], abs=1e-6)
    # T = 2 takes square roots: sqrt(p) / sum(sqrt(p))
    roots = [math.sqrt(p) for p in (0.5, 0.3, 0.1, 0.1)]
    assert r["temperature"].after == pytest.approx([x / sum(roots) for x in roots], abs=1e-6)
    assert r["greedy"].after == [1.0, 0.0, 0.0, 0.0]
    assert r["top_p"].before == pytest.approx([0.5, 0.3, 0.1, 0.1], abs=1e-6)


def test_top_k_keeps_every_token_tied_with_the_kth():
    alone = by_name(each_strategy_alone(FOUR, SamplerSettings(top_k=3)))["top_k"]
    assert alone.kept == 4  # the 3rd and 4th are both 0.1


def test_strategies_that_are_off_show_their_usual_value():
    r = by_name(each_strategy_alone(FOUR, SamplerSettings(temperature=0.0)))
    assert [(n, x.value, x.usual) for n, x in r.items() if n != "greedy"] == [
        ("temperature", 0.7, True),
        ("top_k", 50, True),
        ("top_p", 0.9, True),
        ("min_p", 0.1, True),
    ]
    assert r["top_k"].kept == 4  # k = 50 on a 4-token vocabulary keeps everything


def test_typical_epsilon_and_eta_appear_only_when_set():
    r = by_name(each_strategy_alone(FOUR, SamplerSettings(epsilon=0.2)))
    assert "epsilon" in r and "typical" not in r and "eta" not in r
    assert r["epsilon"].kept == 2  # the two 0.1 tokens fall below 0.2


def test_each_strategy_alone_leaves_the_input_unchanged_and_counts_the_rest():
    logits = preset_logits("reference exercise")
    before = logits.clone()
    r = by_name(each_strategy_alone(logits, SamplerSettings(top_p=0.9, min_p=0.1), top_n=20))
    assert torch.equal(logits, before)
    assert r["top_p"].rest == 32_000 - 20
    # min-p removes every token outside the top three, top-p keeps most of the tail
    assert r["min_p"].rest_kept == 0 and r["min_p"].rest_removed == pytest.approx(0.347, abs=1e-3)
    assert r["top_p"].rest_kept + r["top_p"].rest_removed == pytest.approx(0.347, abs=1e-3)


def test_orders_disagree_on_the_pipeline_docstring_example():
    # transformers: top-p .6 keeps .5 and .3, min-p .3 keeps both; vLLM: min-p first keeps .5 and .3,
    # renormalised .625/.375, then top-p .6 keeps only .625
    c = compare_orders(FOUR, SamplerSettings(top_p=0.6, min_p=0.3))
    assert {o.order: o.kept for o in c.orders} == {"transformers": 2, "vllm": 1, "llama.cpp": 2}
    assert {o.order: o.stages for o in c.orders}["vllm"] == ("min_p", "top_p")
    assert c.n_differing == 1
    token, prob, keepers = c.differing[0]
    assert (token, round(prob, 4), keepers) == (1, 0.3, ("transformers", "llama.cpp"))


def test_orders_agree_when_only_one_filter_runs():
    c = compare_orders(FOUR, SamplerSettings(top_p=0.6))
    assert c.n_differing == 0 and {o.kept for o in c.orders} == {2}


def _exercise_z(t: float) -> float:
    return sum(math.exp(v / t) for v in EXERCISE_TOP) + 31_995


@pytest.mark.parametrize("t", [0.9, 1.0, 1.5, 2.0, 3.0])
def test_top_p_floods_with_zero_logit_tokens_as_temperature_rises(t):
    sweep = temperature_sweep(preset_logits("reference exercise"), [t])
    # the zeros are the least likely: top-p drops them one by one while their mass stays within 0.1,
    # each has probability 1 / Z, so it drops floor(0.1 Z) of them and keeps the rest
    assert sweep.top_p_kept == [32_000 - math.floor(0.1 * _exercise_z(t))]


def test_top_p_and_min_p_on_the_reference_exercise():
    sweep = temperature_sweep(preset_logits("reference exercise"))
    kept_p = dict(zip(sweep.temperatures, sweep.top_p_kept))
    kept_m = dict(zip(sweep.temperatures, sweep.min_p_kept))
    # T = 0.1: .665 + .245 already reach 0.9; T = 1: 22,782 (= 32,000 - 9,218); T = 3: 28,792
    assert (kept_p[0.1], kept_p[0.5], kept_p[1.0], kept_p[3.0]) == (2, 3, 22_782, 28_792)
    assert sweep.top_p_kept == sorted(sweep.top_p_kept)  # more as temperature rises
    # min-p keeps logits >= 10 + T ln 0.1: the top three until 5 clears it (T > 2.17), then 4 (T > 2.61)
    for t, kept in kept_m.items():
        floor = 10 + t * math.log(0.1)
        assert kept == 3 + sum(v >= floor for v in (5, 4)), t
    assert max(sweep.min_p_kept) == 5
    assert all(m >= 0.9 - 1e-4 for m in sweep.top_p_mass)
    assert sweep.min_p_mass[-1] < 0.01  # at T = 3 min-p's few tokens hold under 1% of the flattened mass


def test_parse_logits_reads_numbers_repeats_and_ramps():
    assert parse_logits("1, -2.5\n3").tolist() == [1.0, -2.5, 3.0]
    assert parse_logits("0 x 3, 7").tolist() == [0.0, 0.0, 0.0, 7.0]
    assert parse_logits("1 to 0 x 3").tolist() == [1.0, 0.5, 0.0]
    assert parse_logits("2×2").tolist() == [2.0, 2.0]


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no logits given"),
        ("10, abc, 3", "entry 2 ('abc') is not a number"),
        ("1, nan", "entry 2 ('nan') must be a finite number"),
        ("1, -inf x 4", "entry 2 ('-inf x 4') must be a finite number"),
        ("5", "at least 2 logits (got 1)"),
        ("1 x 0, 2, 3", "count after x must be 1 or more"),
        (f"0 x {MAX_VOCAB}, 1", "more than 262,144 logits"),
    ],
)
def test_parse_logits_errors_name_the_entry_and_the_format(text, message):
    with pytest.raises(ValueError) as err:
        parse_logits(text)
    assert message in str(err.value)


def test_a_bad_entry_error_teaches_the_format():
    with pytest.raises(ValueError, match=r"comma-separated numbers like `10, 9.9, 5`; `0 x 100` repeats"):
        parse_logits("10; 9")


def test_presets_are_what_their_names_say():
    exercise = preset_logits("reference exercise")
    assert exercise.numel() == 32_000 and exercise[:5].tolist() == pytest.approx(list(EXERCISE_TOP))
    assert torch.count_nonzero(exercise[5:]) == 0  # "around 0" taken as exactly 0
    assert torch.softmax(preset_logits("confident"), -1).max() > 0.9
    assert torch.softmax(preset_logits("flat"), -1).max() < 0.01
    tie = preset_logits("two-way tie")
    assert tie[0] == tie[1] == tie.max() and (tie == tie.max()).sum() == 2
    with pytest.raises(ValueError, match="preset must be one of"):
        preset_logits("spiky")


def test_compare_functions_reject_a_batch():
    with pytest.raises(ValueError, match=r"one vector \(V,\)"):
        each_strategy_alone(torch.zeros(2, 4), SamplerSettings())
