"""The quantized copies a server keeps: a few, shared by every session, least recently used dropped first.

A simulated format's copy is float32 tensors, as large as the model (~540 MB for the bundled one), so a process keeps
at most `keep` of them; each is built under a lock, so two sessions asking for int4 at once build it once.
A session's side-by-side run holds its copy while it lives: one dropped here is freed when its runs are.
"""

import threading
from collections import OrderedDict
from dataclasses import replace

from decoding.models import LoadedModel
from decoding.quantization.formats import get_format
from decoding.quantization.model import quantize_model


class Copies:
    def __init__(self, keep: int = 2):
        self.keep = keep
        self._held: OrderedDict[tuple, LoadedModel] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, lm: LoadedModel, name: str) -> LoadedModel:
        """`lm` with its weights in format `name` (float32: `lm` itself), built on first use."""
        fmt = get_format(name)
        if fmt.name == "float32":
            return lm
        key = (lm.model_id, str(lm.device), lm.dtype_name, id(lm.model), fmt.name)
        with self._lock:
            if key in self._held:
                self._held.move_to_end(key)
                return self._held[key]
            while len(self._held) >= self.keep:
                self._held.popitem(last=False)  # dropped before the new one is built: never keep + 1 at once
            self._held[key] = replace(lm, model=quantize_model(lm.model, fmt), weights=fmt.name, warm_up_ms=None)
            return self._held[key]

    def names(self) -> list[str]:
        """The formats held now, least recently used first."""
        return [key[-1] for key in self._held]


COPIES = Copies()  # the process's one set of copies
