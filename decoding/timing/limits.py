"""The machine's own limits, measured: memory bandwidth and peak matmul FLOP/s.

Memory bandwidth comes from one large tensor copy (it reads N bytes and writes N bytes), peak FLOP/s
from one large square matmul in the model's dtype. A limit is the best the machine showed, so these two
use the fastest run (other work on a shared machine only ever slows a run down); the model's own timings
use medians. Every probe synchronises before reading the
clock (decoding.clock.Timer), runs warm-up passes that are thrown away, then repeats and keeps
every raw time: the median and the spread are for whoever shows them.
"""

import os
import platform
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import median

import torch

from decoding.clock import Timer
from decoding.watch import Watch


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
    return Probe(value=moved / (min(ms) / 1e3) / 1e9, unit="GB/s", ms=ms, work=moved, detail=detail)


def measure_peak_flops(device, dtype, n: int = 2048, repeats: int = 3, warmup: int = 1, watch=None) -> Probe:
    """An n × n by n × n matmul: 2n³ FLOPs ÷ fastest time."""
    if not (isinstance(n, int) and 64 <= n <= 32768):
        raise ValueError(f"matmul size must be an integer in [64, 32768], got {n!r}")
    a = torch.randn(n, n, device=device).to(dtype)  # (n, n)
    b = torch.randn(n, n, device=device).to(dtype)  # (n, n)
    ms = repeat_timed(device, lambda: a @ b, repeats, warmup, watch or Watch())
    flops = 2.0 * n**3
    return Probe(
        value=flops / (min(ms) / 1e3) / 1e12, unit="TFLOP/s", ms=ms, work=flops, detail=f"{n}×{n} matmul ({dtype})"
    )


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    if device.type == "cpu":
        threads = torch.get_num_threads()
        return f"{_cpu_model()} CPU, {threads} thread{'s' if threads > 1 else ''}"
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
