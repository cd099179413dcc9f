"""The step tab's inspectors: what the penalties moved on the pending logits, what each engine order keeps."""

import torch

from decoding.inspector import MAX_DIFFERING, inspect_step, strategies_alone
from decoding.loop import Run
from decoding.pipeline import ORDERS, SamplerSettings
from decoding.prompts import encode_prompt
from decoding.sandbox import compare_orders, each_strategy_alone


def _run(tiny) -> Run:
    run = Run(tiny, encode_prompt(tiny.tokenizer, "abcabc", chat=False))
    run.prefill()
    return run


def test_penalties_move_only_tokens_in_the_context_and_say_so(tiny):
    run = _run(tiny)
    found = inspect_step(run, SamplerSettings(repetition_penalty=1.5))
    assert found.penalties_on and found.moved
    assert all(m.id in run.ids and m.after != m.before for m in found.moved)
    assert [m.before for m in found.moved] == sorted((m.before for m in found.moved), reverse=True)


def test_no_penalty_means_nothing_moved(tiny):
    found = inspect_step(_run(tiny), SamplerSettings(top_p=0.6))
    assert not found.penalties_on and found.moved == []


def test_the_orders_are_the_sandbox_comparison_with_token_texts(tiny):
    run, settings = _run(tiny), SamplerSettings(top_p=0.6, min_p=0.3, top_k=40)
    found = inspect_step(run, settings)
    expected = compare_orders(run.logits, settings, run.ids, run.generated, max_rows=MAX_DIFFERING)
    assert found.kept_by_order == {o.order: o.kept for o in expected.orders} and set(found.kept_by_order) == set(ORDERS)
    assert [keepers for _, keepers in found.differing] == [keepers for _, _, keepers in expected.differing]


def test_each_strategy_alone_is_computed_once_for_equal_logits_and_settings(tiny):
    settings = SamplerSettings(top_p=0.6, min_p=0.3, top_k=40)
    first, second = _run(tiny), _run(tiny)  # two sessions, one prompt: equal logits, separate runs
    assert torch.equal(first.logits, second.logits)
    results, labels = strategies_alone(first, settings, 5)
    again, again_labels = strategies_alone(second, settings, 5)
    assert again is results and again_labels == labels
    assert results == each_strategy_alone(first.preview(settings).raw, settings, 5)


def test_each_strategy_alone_is_computed_afresh_when_logits_or_settings_differ(tiny):
    settings = SamplerSettings(top_p=0.6)
    run = _run(tiny)
    results, _ = strategies_alone(run, settings, 5)
    assert strategies_alone(run, SamplerSettings(top_p=0.7), 5)[0] is not results
    run.step(settings)  # the next distribution: other logits
    fresh, _ = strategies_alone(run, settings, 5)
    assert fresh is not results and fresh == each_strategy_alone(run.preview(settings).raw, settings, 5)


def test_an_inspection_is_shared_only_by_sessions_with_equal_logits_settings_and_context(tiny):
    settings = SamplerSettings(top_p=0.6, min_p=0.3, top_k=40, repetition_penalty=1.5)
    first, second = _run(tiny), _run(tiny)  # two sessions, one prompt: equal logits, separate runs
    found = inspect_step(first, settings)
    assert inspect_step(second, settings) is found  # identical inputs: the kept result, exactly
    other = SamplerSettings(top_p=0.7, repetition_penalty=1.5)
    mine = inspect_step(second, other)
    expected = compare_orders(second.logits, other, second.ids, second.generated, max_rows=MAX_DIFFERING)
    assert mine is not found and mine.kept_by_order == {o.order: o.kept for o in expected.orders}
    # equal logits in another context: the penalties move that context's tokens, so the inspection is its own
    third = Run(tiny, encode_prompt(tiny.tokenizer, "xyzxyz", chat=False))
    third.prefill()
    third.logits = first.logits.clone()
    theirs = inspect_step(third, settings)
    assert theirs is not found and theirs.moved and {m.id for m in theirs.moved} <= set(third.ids)
    assert not {m.id for m in theirs.moved} & set(first.ids)
