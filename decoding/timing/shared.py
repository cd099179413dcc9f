"""Measurements shared by everyone on this server.

A measurement needs a quiet machine, so it holds the model alone for its whole length (about 30 s on two CPU
cores). Thirty students pressing Measure would queue for a quarter of an hour to learn the same numbers, so the
first complete measurement of a (machine, model, dtype, plan) is kept and handed to the next person at once,
with when it was taken; Re-measure replaces it. A cancelled measurement is never kept.
"""

import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Kept:
    measurements: object  # decoding.timing.sweeps.Measurements
    at: float  # time.time() when it finished

    def when(self) -> str:
        return time.strftime("%H:%M", time.localtime(self.at))


class SharedMeasurements:
    def __init__(self):
        self._kept: dict[tuple, Kept] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(device_name: str, model_id: str, dtype: str, plan: str) -> tuple:
        return (device_name, model_id, dtype, plan)

    def get(self, key: tuple) -> Kept | None:
        with self._lock:
            return self._kept.get(key)

    def keep(self, key: tuple, measurements, at: float | None = None) -> Kept | None:
        """Keep a complete measurement (a cancelled one is returned as None and not kept)."""
        if getattr(measurements, "cancelled", False):
            return None
        kept = Kept(measurements, time.time() if at is None else at)
        with self._lock:
            self._kept[key] = kept
        return kept
