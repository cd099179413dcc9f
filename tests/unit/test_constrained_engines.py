"""Where each engine puts the grammar, on hand-worked logits: transformers and vLLM mask before any truncation;
llama.cpp draws from its chain first and, when the draw is illegal, redoes the step with the grammar first."""

import pytest
import torch

from decoding.constrained.engines import choose, survivors_without_grammar
from decoding.pipeline import GRAMMAR_ORDERS, ORDERS, SamplerSettings, process

# probabilities .5, .3, .1, .1; the model's favourite (token 0) is illegal
LOGITS = torch.log(torch.tensor([0.5, 0.3, 0.1, 0.1]))
LEGAL = torch.tensor([False, True, True, False])


def test_without_a_grammar_every_order_is_unchanged():
    s = SamplerSettings(top_k=3, top_p=0.9, min_p=0.1)
    for order in ORDERS:
        settings = SamplerSettings(**{**s.to_dict(), "order": order})
        a, b = process(LOGITS, settings, [], []), process(LOGITS, settings, [], [], grammar=None)
        assert a.stages == b.stages and torch.equal(a.final, b.final) and "grammar" not in a.stages


def test_each_grammar_order_is_its_engine_order_with_one_grammar_stage():
    for order, stages in GRAMMAR_ORDERS.items():
        assert [s for s in stages if s != "grammar"] == list(ORDERS[order]) and stages.count("grammar") == 1


def test_the_grammar_masks_even_at_temperature_zero():
    p = process(LOGITS, SamplerSettings(temperature=0), [], [], grammar=LEGAL)
    assert p.stages == ("grammar",) and p.kept == (2,) and int(torch.argmax(p.final)) == 1


@pytest.mark.parametrize("order", ["transformers", "vllm"])
def test_grammar_before_truncation_leaves_top_k_only_legal_tokens(order):
    settings = SamplerSettings(top_k=1, order=order)
    assert survivors_without_grammar(LOGITS, settings, [], [], LEGAL) == (1, 0)  # top-k 1 alone keeps the illegal one
    choice = choose(LOGITS, settings, [], [], LEGAL, torch.Generator().manual_seed(0))
    assert choice.token == 1 and choice.resampled_from is None
    assert choice.processed.stages.index("grammar") < choice.processed.stages.index("top_k")


def test_grammar_after_truncation_can_leave_nothing_legal():
    p = process(LOGITS, SamplerSettings(top_k=1, order="llama.cpp"), [], [], grammar=LEGAL)
    assert p.stages == ("top_k", "grammar") and p.kept == (1, 0)


def test_llama_cpp_resamples_with_the_grammar_first_when_its_draw_is_illegal():
    settings = SamplerSettings(top_k=1, order="llama.cpp")
    choice = choose(LOGITS, settings, [], [], LEGAL, torch.Generator().manual_seed(0))
    assert choice.resampled_from == 0 and choice.token == 1
    assert choice.processed.stages == ("grammar", "top_k") and choice.processed.kept == (2, 1)


def test_llama_cpp_keeps_a_legal_draw_without_resampling():
    legal = torch.tensor([True, False, False, True])
    choice = choose(
        LOGITS, SamplerSettings(top_k=1, order="llama.cpp"), [], [], legal, torch.Generator().manual_seed(0)
    )
    assert choice.token == 0 and choice.resampled_from is None and choice.processed.stages == ("top_k", "grammar")
