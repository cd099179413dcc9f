"""The quantized copies a server keeps: a few, shared by every session, least recently used dropped first.

A simulated format's copy is float32 tensors, as large as the model (~540 MB for the bundled one), so a process keeps
at most `keep` of them; each is built under a lock, so two sessions asking for int4 at once build it once.
A session's side-by-side run holds its copy while it lives: one dropped here is freed when its runs are.
"""

import threading
from collections import OrderedDict
from dataclasses import replace

from decoding.models import LoadedModel
from decoding.quantization.formats import BOTH, get_format, parts
from decoding.quantization.model import quantize_model


class Copies:
    def __init__(self, keep: int = 2):
        self.keep = keep
        self._held: OrderedDict[tuple, LoadedModel] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, lm: LoadedModel, name: str, part: str = BOTH) -> LoadedModel:
        """`lm` with the weights of `part` (formats.PARTS) in format `name` (float32: `lm` itself), built on first
        use."""
        fmt = get_format(name)
        if all(f.name == "float32" for f in parts(fmt, part)):
            return lm
        key = (lm.model_id, str(lm.device), lm.dtype_name, id(lm.model), fmt.name, part)
        with self._lock:
            if key in self._held:
                self._held.move_to_end(key)
                return self._held[key]
            while len(self._held) >= self.keep:
                self._held.popitem(last=False)  # dropped before the new one is built: never keep + 1 at once
            model = quantize_model(lm.model, fmt, part=part)
            self._held[key] = replace(lm, model=model, weights=fmt.name, warm_up_ms=None)
            return self._held[key]

    def names(self) -> list[str]:
        """The formats held now, least recently used first."""
        return [key[-2] for key in self._held]


COPIES = Copies()  # the process's one set of copies
