"""Reading what a step asks of the device from torch.profiler: on a CPU nothing is launched and no kernel runs on a
GPU, but the attention operator dispatched is seen, and a launch is counted by its runtime call's name."""

from types import SimpleNamespace

import torch

from decoding.forward import forward_one
from decoding.timing.launches import (
    LAUNCH_CALLS,
    attention_kernels,
    kernels,
    launch_count,
    profiled,
    runtime_calls,
    sdpa_ops,
)


def test_a_cpu_step_launches_nothing_and_shows_its_attention_backend(tiny):
    _, cache = forward_one(tiny, [5, 6, 7], None, 0)
    events = profiled(tiny.device, lambda: forward_one(tiny, [8], cache, 3))
    assert events and launch_count(events) == 0 and runtime_calls(events) == {}
    assert kernels(events) == [] and attention_kernels(events) == []  # no CUDA activity: no kernel
    assert any("scaled_dot_product" in name for name in sdpa_ops(events))  # the operator, and the backend under it


def _event(name: str, device: str = "CPU", us: float = 0.0):
    device_type = getattr(torch.autograd.DeviceType, device)
    return SimpleNamespace(name=name, device_type=device_type, time_range=SimpleNamespace(elapsed_us=lambda: us))


def test_launches_are_counted_by_name_and_every_runtime_call_is_kept():
    events = [_event("cudaLaunchKernel")] * 3 + [_event("cudaGraphLaunch"), _event("cudaMemcpyAsync")]
    events += [_event("cuLaunchKernelEx"), _event("aten::mm"), _event("culture")]
    assert {"cudaLaunchKernel", "cudaGraphLaunch", "cuLaunchKernelEx"} <= LAUNCH_CALLS
    assert launch_count(events) == 5
    # a torch whose profiler names its launches otherwise still shows them here, beside a count of 0
    assert runtime_calls(events) == {
        "cudaLaunchKernel": 3,
        "cudaGraphLaunch": 1,
        "cudaMemcpyAsync": 1,
        "cuLaunchKernelEx": 1,
    }


def test_kernels_are_summed_by_name_longest_first_and_attentions_picked_out():
    events = [
        _event("void flash_fwd_kernel<...>", "CUDA", 30.0),
        _event("sm90_xmma_gemm_bf16", "CUDA", 10.0),
        _event("sm90_xmma_gemm_bf16", "CUDA", 25.0),
        _event("elementwise_kernel", "CUDA", 5.0),
        _event("aten::mm", "CPU", 99.0),
    ]
    assert kernels(events) == [
        {"name": "sm90_xmma_gemm_bf16", "count": 2, "us": 35.0},
        {"name": "void flash_fwd_kernel<...>", "count": 1, "us": 30.0},
        {"name": "elementwise_kernel", "count": 1, "us": 5.0},
    ]
    assert [k["name"] for k in attention_kernels(events)] == ["sm90_xmma_gemm_bf16", "void flash_fwd_kernel<...>"]
