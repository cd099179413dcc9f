"""Results kept for every session: the last few answers of a function of a run's pending logits, read again by any
session whose inputs are exactly the same.

A class that presses one preset gets the same logits in every session (the prefix cache answers them bit for bit,
decoding.serving.prefix), so whatever is computed from those logits and the session's settings alone is the same
for all thirty: computing it once is enough. A result is kept under every other input it depends on, whole (the
settings, the context's token ids, ...), and under the logits themselves: a few sampled logits find the candidate
and `torch.equal` over all of them decides, so a hit is exactly what computing it again would give, and a session
with other logits or other settings never reads another's result. The results are shared: read them, never change
them."""

import threading
from collections import OrderedDict
from collections.abc import Hashable

import torch


class Recent:
    """The last `size` (logits, inputs) -> result, least recently used first; safe to call from any thread."""

    def __init__(self, size: int):
        self.size, self._kept, self._lock = size, OrderedDict(), threading.Lock()

    @staticmethod
    def _key(logits: torch.Tensor, inputs: Hashable) -> tuple:
        sampled = logits[:: max(1, logits.numel() // 16)]  # (16,) or so: cheap, and tells most logits apart
        return tuple(sampled.tolist()), inputs

    def get(self, logits: torch.Tensor, inputs: Hashable):
        """The result kept for exactly these logits and inputs, or None."""
        key = self._key(logits, inputs)
        with self._lock:
            kept = self._kept.get(key)
            if kept is None or not torch.equal(kept[0], logits):
                return None
            self._kept.move_to_end(key)
            return kept[1]

    def put(self, logits: torch.Tensor, inputs: Hashable, result) -> None:
        key = self._key(logits, inputs)
        with self._lock:
            self._kept[key] = (logits.clone(), result)
            self._kept.move_to_end(key)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
