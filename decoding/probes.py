"""The machine's own limits, measured, and the model's shape, counted.

Memory bandwidth comes from one large tensor copy (it reads N bytes and writes N bytes), peak FLOP/s
from one large square matmul in the model's dtype. A limit is the best the machine showed, so these two
use the fastest run (other work on a shared machine only ever slows a run down); the model's own timings
use medians. Every probe synchronises before reading the
clock (decoding.timing.Timer), runs warm-up passes that are thrown away, then repeats and keeps
every raw time: the median and the spread are for whoever shows them.
"""

import os
import platform
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import median

import torch

from decoding.models import LoadedModel
from decoding.timing import Timer


class Cancelled(Exception):
    """The person asked to stop; the measurement ends at the next forward pass."""


@dataclass
class Watch:
    """How a long measurement reports progress and learns it should stop (both optional)."""

    on_progress: Callable[[float, str], None] = lambda fraction, message: None
    should_stop: Callable[[], bool] = lambda: False

    def check(self) -> None:
        if self.should_stop():
            raise Cancelled("measurement cancelled")


@dataclass
class Sample:
    """Raw times (ms) of one measured thing at one setting `x` (tokens, context, batch ...)."""

    x: int
    ms: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return median(self.ms)

    @property
    def spread_ms(self) -> tuple[float, float]:
        return min(self.ms), max(self.ms)


def repeat_timed(
    device: torch.device, fn: Callable[[], object], repeats: int, warmup: int, watch: Watch
) -> list[float]:
    """Run `fn` warmup + repeats times; return the `repeats` timed runs in ms (warm-up discarded)."""
    if not (isinstance(repeats, int) and repeats >= 1):
        raise ValueError(f"repeats must be an integer >= 1, got {repeats!r}")
    times = []
    for i in range(warmup + repeats):
        watch.check()
        with Timer(device) as t:
            fn()
        if i >= warmup:
            times.append(t.ms)
    return times


@dataclass
class Probe:
    """One machine limit: the value (GB/s or TFLOP/s, from the fastest run) and the raw times."""

    value: float
    unit: str
    ms: list[float]
    work: float  # bytes moved or FLOPs done per run
    detail: str


def measure_bandwidth(device, dtype, mbytes: int = 256, repeats: int = 5, warmup: int = 2, watch=None) -> Probe:
    """Copy a `mbytes` MB tensor: bandwidth = 2 × bytes (read + write) ÷ fastest time."""
    if not (isinstance(mbytes, int) and 1 <= mbytes <= 8192):
        raise ValueError(f"copy size must be an integer number of MB in [1, 8192], got {mbytes!r}")
    numel = mbytes * 2**20 // torch.empty((), dtype=dtype).element_size()
    src = torch.ones(numel, dtype=dtype, device=device)  # (numel,)
    dst = torch.empty_like(src)
    ms = repeat_timed(device, lambda: dst.copy_(src), repeats, warmup, watch or Watch())
    moved = 2.0 * src.nbytes
    detail = f"copy of {src.nbytes / 1e6:.0f} MB ({dtype}), read + write"
    return Probe(moved / (min(ms) / 1e3) / 1e9, "GB/s", ms, moved, detail)


def measure_peak_flops(device, dtype, n: int = 2048, repeats: int = 3, warmup: int = 1, watch=None) -> Probe:
    """An n × n by n × n matmul: 2n³ FLOPs ÷ fastest time."""
    if not (isinstance(n, int) and 64 <= n <= 32768):
        raise ValueError(f"matmul size must be an integer in [64, 32768], got {n!r}")
    a = torch.randn(n, n, device=device).to(dtype)  # (n, n)
    b = torch.randn(n, n, device=device).to(dtype)  # (n, n)
    ms = repeat_timed(device, lambda: a @ b, repeats, warmup, watch or Watch())
    flops = 2.0 * n**3
    return Probe(flops / (min(ms) / 1e3) / 1e12, "TFLOP/s", ms, flops, f"{n}×{n} matmul ({dtype})")


@dataclass(frozen=True)
class ModelShape:
    """What the roofline arithmetic needs to know about a model."""

    body_params: int  # every parameter a token passes through, except the input embedding and the LM head
    head_params: int  # the LM head matrix (the embedding matrix when they are tied)
    layers: int
    q_heads: int
    kv_heads: int
    head_dim: int
    bytes_per_param: int

    @property
    def params_read(self) -> int:
        """Parameters one decode step reads: the body plus the LM head."""
        return self.body_params + self.head_params

    @property
    def weight_bytes(self) -> int:
        return self.params_read * self.bytes_per_param

    @property
    def attn_dim(self) -> int:
        return self.q_heads * self.head_dim


def model_shape(lm: LoadedModel) -> ModelShape:
    """Count the weights a decode step actually reads.

    The input embedding is a lookup: a step reads one row of it per token, not the matrix, so it is
    left out. The LM head is a full matmul over the vocabulary and is read whole. When the two are
    tied (SmolLM2) they are one tensor, counted once, as the LM head read."""
    model, config = lm.model, lm.model.config
    head = model.get_output_embeddings().weight
    embed = model.get_input_embeddings().weight
    skip = {id(head), id(embed)}
    body = sum(p.numel() for p in model.parameters() if id(p) not in skip)
    q_heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // q_heads
    return ModelShape(
        body_params=body,
        head_params=head.numel(),
        layers=config.num_hidden_layers,
        q_heads=q_heads,
        kv_heads=getattr(config, "num_key_value_heads", None) or q_heads,
        head_dim=head_dim,
        bytes_per_param=head.element_size(),
    )


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    if device.type == "cpu":
        return f"{_cpu_model()} CPU, {torch.get_num_threads()} threads"
    return str(device)


def device_memory_bytes(device: torch.device) -> int:
    """Total memory the model and its KV caches share: the GPU's, or the machine's RAM on CPU."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        return names[0] if names else platform.processor() or "unknown"
    except OSError:
        return platform.processor() or "unknown"
