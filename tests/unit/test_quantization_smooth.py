"""Smoothing is an identity in float32: it moves scale between activations and weights, never changes a logit."""

import pytest
import torch

from decoding.quantization.smooth import activation_maxima, calibration_maxima, smooth_model, smoothing_scales

IDS = torch.tensor([[5, 9, 77, 31, 200, 14, 3, 120]])  # (1, T)


@pytest.fixture(scope="module")
def maxima(tiny):
    return calibration_maxima(tiny.model, tiny.tokenizer)


def test_activation_maxima_cover_every_linear_with_one_peak_per_input_channel(tiny, maxima):
    linears = {n: m for n, m in tiny.model.named_modules() if isinstance(m, torch.nn.Linear)}
    assert set(maxima) == set(linears)
    assert all(maxima[n].shape == (m.in_features,) and (maxima[n] >= 0).all() for n, m in linears.items())


def test_maxima_are_the_running_peak_over_the_windows(tiny):
    first = activation_maxima(tiny.model, [5, 9, 77], window=3)
    both = activation_maxima(tiny.model, [5, 9, 77, 31, 200, 14], window=3)
    second = activation_maxima(tiny.model, [31, 200, 14], window=3)
    assert all(torch.equal(both[n], torch.maximum(first[n], second[n])) for n in first)


def test_scales_balance_activation_and_weight_peaks():
    act, w = torch.tensor([4.0, 1.0]), torch.tensor([[1.0, 4.0], [0.5, 1.0]])  # peaks: acts (4, 1), weights (1, 4)
    s = smoothing_scales(act, [w], alpha=0.5)
    assert torch.allclose(s, torch.tensor([2.0, 0.5]))
    # after smoothing both peaks of each channel are equal: max|X_j| / s_j == max|W_j| * s_j
    assert torch.allclose(act / s, w.abs().amax(0) * s)


def test_alpha_outside_zero_to_one_is_refused_by_name():
    with pytest.raises(ValueError, match="alpha .* 0..1; got 1.5"):
        smoothing_scales(torch.ones(2), [torch.ones(1, 2)], alpha=1.5)


@pytest.mark.parametrize("alpha", [0.5, 0.8])
def test_smoothing_leaves_float32_logits_unchanged_up_to_rounding(tiny, maxima, alpha):
    smoothed = smooth_model(tiny.model, maxima, alpha)
    with torch.inference_mode():
        ref, out = tiny.model(input_ids=IDS).logits, smoothed(input_ids=IDS).logits
    assert torch.allclose(out, ref, atol=1e-4 * ref.abs().max())


def test_smoothing_changes_the_weights_of_a_copy_and_unties_its_head(tiny, maxima):
    before = {k: v.clone() for k, v in tiny.model.state_dict().items()}
    smoothed = smooth_model(tiny.model, maxima, 0.5)
    assert all(torch.equal(v, before[k]) for k, v in tiny.model.state_dict().items())
    q_proj = smoothed.model.layers[0].self_attn.q_proj.weight
    assert not torch.equal(q_proj, before["model.layers.0.self_attn.q_proj.weight"])
    assert smoothed.lm_head.weight is not smoothed.model.embed_tokens.weight
    assert torch.equal(smoothed.model.embed_tokens.weight, before["model.embed_tokens.weight"])
