"""quantize_model works on a copy: float32 is the model itself, the others change only their linears."""

import torch

from decoding.quantization.linear import SIMULATED, QuantLinear
from decoding.quantization.model import bytes_per_step, kernels_of, quantize_model
from decoding.timing.shape import model_shape


def test_float32_is_the_model_itself_so_its_tokens_are_generates(tiny):
    assert quantize_model(tiny.model, "float32") is tiny.model


def test_quantizing_leaves_the_original_model_alone(tiny):
    before = {k: v.clone() for k, v in tiny.model.state_dict().items()}
    quantized = quantize_model(tiny.model, "int4")
    assert quantized is not tiny.model
    assert all(torch.equal(v, before[k]) for k, v in tiny.model.state_dict().items())
    assert not any(isinstance(m, QuantLinear) for m in tiny.model.modules())


def test_every_linear_and_the_lm_head_are_quantized_and_the_embedding_is_not(tiny):
    quantized = quantize_model(tiny.model, "int8")
    assert not any(type(m) is torch.nn.Linear for m in quantized.modules())
    assert isinstance(quantized.get_output_embeddings(), QuantLinear)
    assert torch.equal(quantized.get_input_embeddings().weight, tiny.model.get_input_embeddings().weight)
    assert kernels_of(quantized) == (SIMULATED,) and kernels_of(tiny.model) == ("F.linear",)


def test_a_quantized_model_predicts_close_to_float32(tiny):
    ids = torch.tensor([[5, 9, 77, 31, 200, 14]])  # (1, T)
    with torch.inference_mode():
        ref = tiny.model(input_ids=ids).logits
        int8 = quantize_model(tiny.model, "int8")(input_ids=ids).logits
    assert int8.shape == ref.shape and not torch.equal(int8, ref)
    assert (int8 - ref).abs().max() < 0.05 * ref.abs().max()


def test_float32_bytes_per_step_are_the_roofline_weight_bytes(tiny):
    assert bytes_per_step(tiny.model) == model_shape(tiny).weight_bytes


def test_bytes_per_step_shrink_with_the_format(tiny):
    sizes = [bytes_per_step(quantize_model(tiny.model, f)) for f in ("float32", "bfloat16", "int8", "int4")]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 4


def test_the_bundled_model_reads_538_mb_in_float32_and_a_quarter_of_it_in_int8(bundled):
    assert bytes_per_step(bundled.model) == 538_060_032
    # 134.5 M weights at one byte, plus one float32 scale per output channel, plus the norms in float32
    assert bytes_per_step(quantize_model(bundled.model, "int8")) == 135_439_104
