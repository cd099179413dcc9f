"""quantize_model works on a copy: float32 is the model itself, the others change only their linears."""

import pytest
import torch

from decoding.quantization.formats import BOTH, FORMATS, HEAD, LAYERS, parts
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


def test_a_part_rounds_only_its_linears_and_leaves_the_other_float32(tiny):
    head = tiny.model.get_output_embeddings()
    layers_only = quantize_model(tiny.model, "int4", part=LAYERS)
    head_only = quantize_model(tiny.model, "int4", part=HEAD)
    assert type(layers_only.get_output_embeddings()) is torch.nn.Linear
    assert torch.equal(layers_only.get_output_embeddings().weight, head.weight)
    assert all(isinstance(m, QuantLinear) for m in _layer_linears(layers_only))
    assert isinstance(head_only.get_output_embeddings(), QuantLinear)
    assert all(type(m) is torch.nn.Linear for m in _layer_linears(head_only))


def test_int4_head_kept_is_int4_on_the_layers_only_and_rounds_nothing_on_the_head(tiny):
    kept, layers_only = quantize_model(tiny.model, "int4, head kept"), quantize_model(tiny.model, "int4", part=LAYERS)
    assert all(torch.equal(a, b) for a, b in zip(kept.state_dict().values(), layers_only.state_dict().values()))
    assert quantize_model(tiny.model, "int4, head kept", part=HEAD) is tiny.model


def test_a_part_outside_the_three_is_named_with_the_ones_allowed():
    with pytest.raises(ValueError, match="part must be one of layers and head, layers only, head only; got 'norms'"):
        parts(FORMATS["int4"], "norms")


def test_as_stored_reads_the_files_q4_1_layers_and_q8_0_head_bytes(tiny):
    fmt = FORMATS["as stored"]
    assert fmt.nbytes(1, 32) == 16 + 4  # ggml's block_q4_1: 32 nibbles, a float16 scale and minimum
    assert fmt.head_format.nbytes(1, 32) == 32 + 2  # block_q8_0: 32 int8, a float16 scale
    assert parts(fmt, BOTH) == (fmt, fmt.head_format) and parts(fmt, LAYERS)[1].name == "float32"


def _layer_linears(model):
    head = model.get_output_embeddings()
    return [m for m in model.modules() if isinstance(m, (torch.nn.Linear, QuantLinear)) and m is not head]
