"""Quantize a model: a copy whose every nn.Linear (the layers and the LM head) runs one format; bytes per step.

The input embedding stays float32: a decode step reads one row of it, not the matrix. When it is tied to the LM
head (SmolLM2), the head gets its own quantized copy and the embedding keeps the float32 one.
float32 is never copied or touched: it is the model itself, so it stays token-equal to generate().
"""

import copy

import torch

from decoding.quantization.formats import Format, get_format
from decoding.quantization.linear import SIMULATED, QuantLinear

# the kernel each format runs by default, per device type, chosen from the tab's kernel timing (decoding/quantization/
# kernels.py) and bench/quantization.py on a 2-core AMD EPYC (AVX2, no AVX-512): int8pack and int4pack stream their
# bytes at 0.3-1.5 GB/s against float32's ~11, so int8 and int4 are simulated; bfloat16's F.linear decodes 1.28x
# faster on a quiet machine but slower on a busy one, and prefills 5x slower (no AVX-512 BF16), so it is simulated
# too; fbgemm's dynamic int8 is fast (1.5-1.7x) and real
DEFAULT_KERNELS = {
    "cpu": {"int8-activations": "fbgemm quantized.linear_dynamic"},
}


def default_kernel(fmt: Format, device: torch.device) -> str:
    return DEFAULT_KERNELS.get(device.type, {}).get(fmt.name, SIMULATED)


@torch.no_grad()
def quantize_model(model: torch.nn.Module, fmt: Format | str, kernel: str | None = None) -> torch.nn.Module:
    """A copy of `model` with every nn.Linear replaced by a QuantLinear in `fmt`; float32 returns `model` itself."""
    fmt = get_format(fmt) if isinstance(fmt, str) else fmt
    if fmt.name == "float32":
        return model
    device = next(model.parameters()).device
    kernel = kernel or default_kernel(fmt, device)
    linears = [name for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    # the copy shares nothing with the original: the linears are swapped out of the copy, never the original
    quantized = copy.deepcopy(model)
    for name in linears:
        parent, _, child = name.rpartition(".")
        owner = quantized.get_submodule(parent) if parent else quantized
        setattr(owner, child, QuantLinear(getattr(owner, child), fmt, kernel).to(device))
    return quantized.eval()


def kernels_of(model: torch.nn.Module) -> tuple[str, ...]:
    """The kernels a (quantized) model runs, each once: ("F.linear",) for a plain model."""
    names = {m.kernel for m in model.modules() if isinstance(m, QuantLinear)}
    return tuple(sorted(names)) or ("F.linear",)


def bytes_per_step(model: torch.nn.Module) -> int:
    """Weight bytes one decode step reads: every linear whole, in its format; norms; one embedding row (left out)."""
    embed = model.get_input_embeddings()
    total, seen = 0, set()
    for module in model.modules():
        if module is embed:
            continue
        if isinstance(module, QuantLinear):
            total += module.nbytes + (0 if module.bias is None else module.bias.numel() * 4)
            continue
        for p in module.parameters(recurse=False):
            if id(p) not in seen:  # a tied tensor is read once
                seen.add(id(p))
                total += p.numel() * p.element_size()
    return total
