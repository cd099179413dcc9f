"""Honest clocks: synchronise the device before reading the time.

GPU work is asynchronous: without a sync the clock measures how long it took to queue the kernels,
not to run them. On CUDA we time with CUDA events; on the CPU with perf_counter.
"""

import time

import torch


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


class Timer:
    """`with Timer(device) as t: ...` then `t.ms`: wall time of the block, device work included."""

    def __init__(self, device: torch.device):
        self.device = device
        self.ms = float("nan")

    def __enter__(self):
        if self.device.type == "cuda":
            self._start, self._end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            self._start.record()
        else:
            sync(self.device)
            self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            self._end.record()
            self._end.synchronize()
            self.ms = self._start.elapsed_time(self._end)
        else:
            sync(self.device)
            self.ms = (time.perf_counter() - self._t0) * 1e3
        return False
