"""This machine's own limits, measured once per server and read by every lesson that quotes them.

Memory bandwidth and the matmul peak are properties of the machine and the dtype, not of a lesson: the "Prefill vs
decode" tab, its regime map and the quantization tab all compare what they time with the same two figures. So
there is one method (`probe`: the copy and the matmul of `limits`, at one size per kind of device, the fastest run
kept) and one kept figure per (machine, dtype) on this server (`MachineFigures`). The first measurement that needs
it probes and keeps it; the others reuse it; Re-measure probes again and replaces it.

A figure is plain data (two `limits.Probe`s, names and a time): it crosses into a GPU worker and back as it is.
"""

import threading
import time
from dataclasses import dataclass

import torch

from decoding.timing.limits import Probe, device_name, measure_bandwidth, measure_peak_flops
from decoding.watch import Watch

# one method: the copy (MB) and the matmul (n × n) per kind of device, large enough to leave the caches behind
COPY_MB = {"cuda": 1024, "cpu": 256}
MATMUL_N = {"cuda": 8192, "cpu": 2048}
COPY_REPEATS, COPY_WARMUP = 5, 2
MATMUL_REPEATS, MATMUL_WARMUP = 3, 1


@dataclass(frozen=True)
class MachineFigure:
    """This machine's copy bandwidth and matmul peak in one dtype, and when and where they were measured."""

    where: str  # the device's name (limits.device_name)
    dtype: str
    bandwidth: Probe  # GB/s, from a copy
    peak: Probe  # TFLOP/s, from a square matmul
    at: float  # time.time() when it was measured

    @property
    def bandwidth_gbs(self) -> float:
        return self.bandwidth.value

    @property
    def peak_tflops(self) -> float:
        return self.peak.value

    def when(self) -> str:
        return time.strftime("%H:%M", time.localtime(self.at))


def probe(device: torch.device, dtype: torch.dtype, watch: Watch | None = None) -> MachineFigure:
    """Measure this machine's figure: the copy for the bandwidth, then the matmul for the peak."""
    watch, kind = watch or Watch(), "cuda" if device.type == "cuda" else "cpu"
    watch.on_progress(0.0, "memory bandwidth (a copy)")
    bandwidth = measure_bandwidth(device, dtype, COPY_MB[kind], COPY_REPEATS, COPY_WARMUP, watch)
    watch.on_progress(0.5, "matmul peak")
    peak = measure_peak_flops(device, dtype, MATMUL_N[kind], MATMUL_REPEATS, MATMUL_WARMUP, watch)
    watch.on_progress(1.0, "machine measured")
    return MachineFigure(device_name(device), str(dtype).removeprefix("torch."), bandwidth, peak, time.time())


class MachineFigures:
    """The kept figure per (where, dtype), one set per server: thread-safe, the last one kept replaces the one
    before (Re-measure)."""

    def __init__(self):
        self._kept: dict[tuple[str, str], MachineFigure] = {}
        self._lock = threading.Lock()

    def get(self, where: str, dtype: str) -> MachineFigure | None:
        with self._lock:
            return self._kept.get((where, dtype))

    def keep(self, where: str, dtype: str, figure: MachineFigure | None) -> MachineFigure | None:
        if figure is not None:
            with self._lock:
                self._kept[(where, dtype)] = figure
        return figure

    def forget(self) -> None:
        with self._lock:
            self._kept.clear()


MACHINE = MachineFigures()  # this server's: every tab reads and keeps its figures here
