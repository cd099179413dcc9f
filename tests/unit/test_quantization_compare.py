"""KL, Δp and same top-1 on hand-worked distributions; quality over the held-out text."""

import math

import pytest
import torch

from decoding.quantization.compare import delta_p, kl_divergence, same_top1
from decoding.quantization.model import quantize_model
from decoding.quantization.quality import heldout_ids, measure_quality


def test_identical_logits_have_zero_kl_and_agree():
    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0]])
    assert kl_divergence(logits, logits.clone()).item() == 0.0
    assert bool(same_top1(logits, logits.clone())) and delta_p(logits, logits, torch.tensor([0])).item() == 0.0


def test_kl_of_a_hand_worked_pair():
    p, q = torch.tensor([0.5, 0.5]), torch.tensor([0.9, 0.1])
    expected = 0.5 * math.log(0.5 / 0.9) + 0.5 * math.log(0.5 / 0.1)
    assert kl_divergence(p.log(), q.log()).item() == pytest.approx(expected)


def test_delta_p_is_the_change_in_the_given_tokens_probability_and_top1_can_flip():
    ref, other = torch.tensor([0.6, 0.4]).log(), torch.tensor([0.45, 0.55]).log()
    assert delta_p(ref, other, torch.tensor(0)).item() == pytest.approx(-0.15)
    assert not bool(same_top1(ref, other))


def test_comparisons_do_not_change_their_inputs():
    ref, other = torch.randn(3, 5), torch.randn(3, 5)
    saved = ref.clone(), other.clone()
    kl_divergence(ref, other), delta_p(ref, other, torch.tensor([0, 1, 2])), same_top1(ref, other)
    assert torch.equal(ref, saved[0]) and torch.equal(other, saved[1])


def test_the_reference_against_itself_has_zero_kl_and_full_agreement(tiny):
    ids = heldout_ids(tiny.tokenizer, limit=200)
    q = measure_quality(tiny.model, {"float32": tiny.model}, ids, window=64)["float32"]
    assert q.kl_mean == 0.0 and q.top1_agreement == 1.0 and q.positions == 199 and q.perplexity > 1


def test_quality_worsens_as_bits_go(tiny):
    ids = heldout_ids(tiny.tokenizer, limit=200)
    models = {f: quantize_model(tiny.model, f) for f in ("int8", "int4")}
    q = measure_quality(tiny.model, models, ids, window=64)
    assert 0 < q["int8"].kl_mean < q["int4"].kl_mean


def test_the_heldout_text_is_a_few_thousand_tokens(bundled):
    assert 2000 <= len(heldout_ids(bundled.tokenizer)) <= 3000
