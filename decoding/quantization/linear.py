"""QuantLinear: a drop-in for nn.Linear that holds one format's weights and runs one kernel on them.

A kernel is "real" when it reads the format's bytes (int8 weights go through an int8 kernel), or "simulated":
the rounded weights kept in float32 and multiplied in float32. A simulated run shows the format's distribution
exactly, and its speed is float32's: the page says "simulated" and shows no speed-up for it.
"""

import warnings

import torch
import torch.nn.functional as F

from decoding import layout
from decoding.quantization import quantizers
from decoding.quantization.formats import Format

SIMULATED = "simulated: rounded weights, float32 compute"
KERNELS = {  # name -> the formats it can run
    SIMULATED: ("bfloat16", "int8", "int8-activations", "int4", "int4-g64"),
    "F.linear bfloat16": ("bfloat16",),
    "torch._weight_int8pack_mm": ("int8",),
    "aten._weight_int4pack_mm_for_cpu": ("int4", "int4-g64"),
    "fbgemm quantized.linear_dynamic": ("int8-activations",),
}


class QuantLinear(torch.nn.Module):
    def __init__(self, linear: torch.nn.Linear, fmt: Format, kernel: str = SIMULATED):
        super().__init__()
        if kernel != SIMULATED and fmt.name not in KERNELS.get(kernel, ()):  # any format can be simulated
            raise ValueError(f"kernel {kernel!r} cannot run {fmt.name}; kernels for it: {kernels_for(fmt.name)}")
        self.fmt, self.kernel = fmt, kernel
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.nbytes = fmt.nbytes(self.out_features, self.in_features)
        w = linear.weight.detach().float()
        self.bias = None if linear.bias is None else linear.bias.detach().float().clone()
        self._forward = _build(kernel, fmt, w, self)

    @property
    def simulated(self) -> bool:
        return self.kernel == SIMULATED

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self._forward(x)  # (..., out)
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return f"{self.in_features} -> {self.out_features}, {self.fmt.name}, kernel={self.kernel}"


def kernels_for(name: str) -> list[str]:
    return [k for k, formats in KERNELS.items() if name in formats]


def _build(kernel: str, fmt: Format, w: torch.Tensor, holder: torch.nn.Module):
    """The forward for one kernel, closing over buffers registered on `holder` (so .to() and state_dict see them)."""
    if kernel == SIMULATED:
        # the rounded weights in the float32 weights' layout (decoding.layout): where rounding changes no value, the
        # format's pass is then the float32 pass, to the bit
        holder.register_buffer("weight", layout.like(quantizers.rounded(w.contiguous(), fmt), w))
        if fmt.activations:
            return lambda x: F.linear(fake_quantize_activations(x), holder.weight)
        return lambda x: F.linear(x, holder.weight)
    if kernel == "F.linear bfloat16":  # in the float32 weights' layout, as the pass it is compared with
        holder.register_buffer("weight", w.to(torch.bfloat16))
        return lambda x: F.linear(x.to(torch.bfloat16), holder.weight).to(x.dtype)
    w = w.contiguous()  # the packing kernels read (out, in) rows
    if kernel == "torch._weight_int8pack_mm":
        q, scale = quantizers.int8_per_channel(w)
        holder.register_buffer("qweight", q)
        holder.register_buffer("scale", scale)
        return lambda x: _rows(x, lambda x2: torch._weight_int8pack_mm(x2, holder.qweight, holder.scale))
    if kernel == "aten._weight_int4pack_mm_for_cpu":
        return _int4pack(w, fmt.group, holder)
    return _fbgemm_dynamic(w, holder)


def _rows(x: torch.Tensor, mm) -> torch.Tensor:
    """Run a 2-D-only kernel on (..., K) inputs."""
    y = mm(x.reshape(-1, x.shape[-1]).contiguous())  # (rows, N)
    return y.reshape(*x.shape[:-1], y.shape[-1])


def _int4pack(w: torch.Tensor, group: int, holder: torch.nn.Module):
    q, scale, low = quantizers.int4_groups(w, group)
    packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q.to(torch.int32), 1)  # (N, K / 2) uint8
    # the kernel computes (q - 8) * scale + zero, so zero = low + 8 * scale
    scales_zeros = torch.stack([scale, low + 8 * scale], dim=-1).transpose(0, 1).contiguous()  # (G, N, 2)
    holder.register_buffer("qweight", packed)
    holder.register_buffer("scales_zeros", scales_zeros)
    return lambda x: _rows(
        x, lambda x2: torch.ops.aten._weight_int4pack_mm_for_cpu(x2, holder.qweight, group, holder.scales_zeros)
    )


def _fbgemm_dynamic(w: torch.Tensor, holder: torch.nn.Module):
    """What torch.ao's quantize_dynamic runs, with per-channel weights: each input is quantized per tensor."""
    q, scale = quantizers.int8_per_channel(w)
    zeros = torch.zeros(w.shape[0], dtype=torch.long)
    with warnings.catch_warnings():  # torch deprecates quantized tensors; fbgemm's dynamic linear still takes one
        warnings.simplefilter("ignore", UserWarning)
        qweight = torch._make_per_channel_quantized_tensor(q, scale.double(), zeros, 0)
    packed = torch.ops.quantized.linear_prepack(qweight, None)
    holder._packed = packed  # an opaque fbgemm object, not a tensor
    # reduce_range: fbgemm on x86 keeps activations to 7 bits so int8 products cannot overflow
    return lambda x: _rows(x, lambda x2: torch.ops.quantized.linear_dynamic(x2, holder._packed, True))


def fake_quantize_activations(x: torch.Tensor) -> torch.Tensor:
    """Activations rounded as fbgemm's dynamic path rounds them: one asymmetric 7-bit grid for the whole tensor."""
    low, high = x.min().clamp(max=0), x.max().clamp(min=0)
    scale = ((high - low) / 127).clamp(min=1e-12)
    zero = torch.round(-low / scale)
    return (torch.round(x / scale + zero).clamp(0, 127) - zero) * scale
