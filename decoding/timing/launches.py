"""What a step asks of the GPU, read from torch.profiler: the host calls that start work there, and the kernels run.

At batch 1 a small model's decode step on a GPU is set by its launches, not its bytes (docs/measurements/gpu.md): the
eager step launches a few hundred kernels one by one from Python, a captured step one graph. The profiler records
each CUDA runtime or driver call the host makes and each kernel the device runs. The names it gives them can change
between torch versions, so beside the count of the launch calls we know (LAUNCH_CALLS) these keep every runtime call
seen, by name: a count of 0 where launches plainly happened means the names moved, not that the step is free.
"""

import re
from collections import Counter
from collections.abc import Callable

import torch

from decoding.clock import sync

# the host calls that start work on the GPU: a kernel, or a whole captured graph
LAUNCH_CALLS = frozenset(
    {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch"}
)
RUNTIME_CALL = re.compile(r"^cu(da)?[A-Z]")  # cudaLaunchKernel, cuLaunchKernelEx, cudaMemcpyAsync, cudaStreamSync...
# the kernels and operators that say how attention ran: the SDPA backend (flash, memory-efficient, cuDNN, math),
# its softmax, and the matrix products around it
ATTENTION = re.compile(r"attention|attn|sdpa|flash|mem_eff|fmha|softmax|gemm|gemv|cutlass|cudnn", re.IGNORECASE)


def profiled(device: torch.device, fn: Callable[[], object]) -> list:
    """Run `fn` once under torch.profiler, the device synchronised before it stops: the events it recorded (host
    operators and runtime calls; on CUDA the kernels too)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        fn()
        sync(device)
    return list(prof.events())


def launch_count(events: list) -> int:
    """Host calls among `events` that launch GPU work (LAUNCH_CALLS): a captured graph's replay is one."""
    return sum(event.name in LAUNCH_CALLS for event in events)


def runtime_calls(events: list) -> dict[str, int]:
    """Every CUDA runtime or driver call the host made, by name, most frequent first."""
    return dict(Counter(e.name for e in events if RUNTIME_CALL.match(e.name)).most_common())


def kernels(events: list, top: int = 20) -> list[dict]:
    """The `top` kernels the device ran, by total time: name, how many times, total µs. Empty on a CPU."""
    ran = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
    times: Counter = Counter()
    counts: Counter = Counter()
    for e in ran:
        times[e.name] += e.time_range.elapsed_us()
        counts[e.name] += 1
    return [dict(name=name, count=counts[name], us=round(us, 1)) for name, us in times.most_common(top)]


def attention_kernels(events: list) -> list[dict]:
    """Of every kernel run, those whose name says attention, softmax or a matrix product (ATTENTION)."""
    return [k for k in kernels(events, top=10_000) if ATTENTION.search(k["name"])]


def sdpa_ops(events: list) -> dict[str, int]:
    """The scaled-dot-product-attention operators the host dispatched, by name: the one under
    `aten::scaled_dot_product_attention` names the backend chosen (`_scaled_dot_product_flash_attention`,
    `_efficient_attention`, `_cudnn_attention`, `_attention_math`; `..._for_cpu` on a CPU)."""
    return dict(Counter(e.name for e in events if "scaled_dot_product" in e.name).most_common())
