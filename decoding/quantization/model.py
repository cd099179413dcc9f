"""Quantize a model: a copy whose nn.Linears (the layers, the LM head, or both) run one format; bytes per step.

The input embedding stays float32: a decode step reads one row of it, not the matrix. When it is tied to the LM
head (SmolLM2), the head gets its own quantized copy and the embedding keeps the float32 one.
float32 is never copied or touched: it is the model itself, so it stays token-equal to generate().
"""

import copy

import torch

from decoding.quantization.formats import BOTH, Format, get_format, parts
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
def quantize_model(
    model: torch.nn.Module, fmt: Format | str, kernel: str | None = None, part: str = BOTH
) -> torch.nn.Module:
    """A copy of `model` whose linears of `part` (formats.PARTS) are QuantLinears in `fmt` (the LM head in the
    format's own head format), the rest left float32; a format that rounds nothing returns `model` itself."""
    fmt = get_format(fmt) if isinstance(fmt, str) else fmt
    layers_fmt, head_fmt = parts(fmt, part)
    if layers_fmt.name == head_fmt.name == "float32":
        return model
    device = next(model.parameters()).device
    head = model.get_output_embeddings()
    chosen = {}  # linear name -> its format, float32 ones left out
    for name, m in model.named_modules():
        target = head_fmt if m is head else layers_fmt
        if isinstance(m, torch.nn.Linear) and target.name != "float32":
            chosen[name] = target
    # the copy shares nothing with the original: the linears are swapped out of the copy, never the original
    quantized = copy.deepcopy(model)
    for name, target in chosen.items():
        parent, _, child = name.rpartition(".")
        owner = quantized.get_submodule(parent) if parent else quantized
        module = QuantLinear(getattr(owner, child), target, kernel or default_kernel(target, device))
        setattr(owner, child, module.to(device))
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
