"""Round-to-nearest quantizers stay within half a step of the weights, and every kernel runs its format's grid."""

import pytest
import torch

from decoding.quantization import quantizers
from decoding.quantization.formats import FORMATS, get_format
from decoding.quantization.linear import KERNELS, SIMULATED, QuantLinear, fake_quantize_activations


@pytest.fixture
def weight():
    torch.manual_seed(0)
    return torch.randn(48, 64) * 0.1


def test_int8_round_trip_is_within_half_a_step_per_channel(weight):
    q, scale = quantizers.int8_per_channel(weight)
    assert q.dtype == torch.int8 and scale.shape == (48,)
    error = (quantizers.int8_dequantize(q, scale) - weight).abs()
    assert (error <= scale[:, None] / 2 + 1e-7).all()


@pytest.mark.parametrize("group", [32, 64])
def test_int8_groups_round_trip_is_within_half_a_step_per_group(weight, group):
    q, scale = quantizers.int8_groups(weight, group)
    assert q.dtype == torch.int8 and scale.shape == (48, 64 // group)
    error = (quantizers.int8_groups_dequantize(q, scale) - weight).abs().reshape(48, -1, group)
    assert (error <= scale[..., None] / 2 + 1e-7).all()


@pytest.mark.parametrize("group", [32, 64])
def test_int4_round_trip_is_within_half_a_step_per_group(weight, group):
    q, scale, low = quantizers.int4_groups(weight, group)
    assert int(q.max()) <= 15 and scale.shape == (48, 64 // group)
    error = (quantizers.int4_dequantize(q, scale, low) - weight).abs().reshape(48, -1, group)
    assert (error <= scale[..., None] / 2 + 1e-6).all()


def test_int4_group_must_divide_the_input_size(weight):
    with pytest.raises(ValueError, match="must divide the input size 64"):
        quantizers.int4_groups(weight, 48)


def test_quantizers_leave_the_weights_alone(weight):
    before = weight.clone()
    for fmt in FORMATS.values():
        quantizers.rounded(weight, fmt)
    assert torch.equal(weight, before)


def test_fewer_bits_round_further(weight):
    errors = [(quantizers.rounded(weight, FORMATS[f]) - weight).abs().mean() for f in ("bfloat16", "int8", "int4")]
    assert errors[0] < errors[1] < errors[2]


@pytest.mark.parametrize("kernel, name", [(k, f) for k, formats in KERNELS.items() for f in formats if k != SIMULATED])
def test_each_real_kernel_computes_what_its_simulation_computes(weight, kernel, name):
    linear = torch.nn.Linear(64, 48, bias=False)
    linear.weight.data.copy_(weight)
    x = torch.randn(2, 3, 64)  # (B, T, K)
    real, simulated = QuantLinear(linear, FORMATS[name], kernel), QuantLinear(linear, FORMATS[name])
    assert not real.simulated and simulated.simulated
    tolerance = 2e-2 if name == "bfloat16" else 1e-4  # bfloat16 compute rounds the activations too
    torch.testing.assert_close(real(x), simulated(x), atol=tolerance, rtol=tolerance)


def test_a_kernel_refuses_a_format_it_cannot_run():
    with pytest.raises(ValueError, match="cannot run int4"):
        QuantLinear(torch.nn.Linear(64, 8), FORMATS["int4"], "torch._weight_int8pack_mm")


def test_an_unknown_format_names_the_ones_there_are():
    with pytest.raises(ValueError, match="'float32', 'as stored', 'bfloat16', 'int8'"):
        get_format("int3")


def test_activation_rounding_uses_one_grid_for_the_whole_tensor():
    x = torch.tensor([[0.0, 0.01, 0.02, 100.0]])  # one outlier feature
    y = fake_quantize_activations(x)
    assert y[0, 3] == pytest.approx(100.0, rel=1e-2)
    assert torch.equal(y[0, :3], torch.zeros(3))  # the small features round to nothing: the outlier set the step


def test_bytes_count_the_weights_and_their_scales():
    assert FORMATS["float32"].nbytes(10, 64) == 2560
    assert FORMATS["int8"].nbytes(10, 64) == 640 + 40
    assert FORMATS["int4"].nbytes(10, 64) == 320 + 10 * 2 * 8
