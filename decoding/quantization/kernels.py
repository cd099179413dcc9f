"""Why a format runs simulated here: each real kernel this device has, timed on the model's own matrices.

One token's GEMVs, as a decode step runs them: over every linear of the layers one after the other (so no matrix
stays in cache; 425 MB in float32 for SmolLM2) and over the LM head (49152 × 576, 113 MB). Every kernel of
`linear.KERNELS` that builds on this device runs on the same weights, in turns (A, B, C, A, B, C ...) so a busy
machine slows them alike; per kernel and part: the median ms, the weight bytes read, and so the GB/s. A
weight-only kernel pays off only where it streams its fewer bytes at close to float32's GB/s.
"""

import statistics
from dataclasses import dataclass

import torch

from decoding.clock import Timer
from decoding.quantization.formats import FORMATS
from decoding.quantization.linear import KERNELS, SIMULATED, QuantLinear
from decoding.watch import Watch

REFERENCE = "F.linear float32"


@dataclass(frozen=True)
class KernelSpeed:
    kernel: str
    format: str  # the format it ran ("float32" for the reference)
    layers_ms: float  # median time of one token's GEMVs over every linear of the layers
    layers_bytes: int
    head_ms: float  # median time of one token's GEMV over the LM head
    head_bytes: int


def _parts(model: torch.nn.Module) -> tuple[list[torch.nn.Linear], torch.nn.Linear]:
    head = model.get_output_embeddings()
    layers = [m for m in model.modules() if isinstance(m, torch.nn.Linear) and m is not head]
    return layers, head


def _built(kernel: str, linears: list[torch.nn.Linear]) -> tuple[list[torch.nn.Module], int]:
    if kernel == REFERENCE:
        return linears, sum(m.weight.numel() * m.weight.element_size() for m in linears)
    fmt = FORMATS[KERNELS[kernel][0]]
    modules = [QuantLinear(m, fmt, kernel) for m in linears]
    return modules, sum(m.nbytes for m in modules)


@dataclass(frozen=True)
class Built:
    """One kernel built on the model's own matrices: the format it runs, and its modules and their weight bytes over
    the layers and over the head (a list of one)."""

    format: str
    layers: list[torch.nn.Module]
    layers_bytes: int
    head: list[torch.nn.Module]
    head_bytes: int


def candidates(model: torch.nn.Module, watch: Watch) -> dict[str, Built]:
    """kernel -> its modules, for float32 and each real kernel that builds on this device."""
    layers, head = _parts(model)
    found = {}
    for kernel in (REFERENCE, *(k for k in KERNELS if k != SIMULATED)):
        watch.check()
        watch.on_progress(0.0, f"building {kernel}")
        try:
            body, body_bytes = _built(kernel, layers)
            top, top_bytes = _built(kernel, [head])
        except (RuntimeError, NotImplementedError):  # a kernel this build of torch lacks on this device
            continue
        fmt = "float32" if kernel == REFERENCE else KERNELS[kernel][0]
        found[kernel] = Built(fmt, layers=body, layers_bytes=body_bytes, head=top, head_bytes=top_bytes)
    return found


def _timed(modules: list[torch.nn.Module], x_of: dict, device: torch.device) -> float:
    with Timer(device) as t:
        for m in modules:
            m(x_of[m.in_features])
    return t.ms


@torch.inference_mode()
def kernel_speeds(model: torch.nn.Module, repeats: int, watch: Watch | None = None) -> list[KernelSpeed]:
    """Each kernel's one-token GEMVs over the layers and over the head, in turns for `repeats` rounds (+1 warm-up)."""
    watch = watch or Watch()
    device = next(model.parameters()).device
    kernels = candidates(model, watch)
    g = torch.Generator(device).manual_seed(0)
    sizes = {m.in_features for built in kernels.values() for m in built.layers + built.head}
    x_of = {n: torch.randn(1, 1, n, device=device, generator=g) for n in sizes}
    times = {name: ([], []) for name in kernels}
    for r in range(-1, repeats):
        for name, built in kernels.items():
            watch.check()
            layers_ms, head_ms = _timed(built.layers, x_of, device), _timed(built.head, x_of, device)
            if r >= 0:
                times[name][0].append(layers_ms)
                times[name][1].append(head_ms)
        watch.on_progress((r + 2) / (repeats + 1), f"kernels: round {r + 2} of {repeats + 1}")
    return [
        KernelSpeed(
            kernel=name,
            format=built.format,
            layers_ms=statistics.median(times[name][0]),
            layers_bytes=built.layers_bytes,
            head_ms=statistics.median(times[name][1]),
            head_bytes=built.head_bytes,
        )
        for name, built in kernels.items()
    ]
