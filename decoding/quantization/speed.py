"""Prefill and decode, timed per format in turns: the reference predicts decode gains the byte ratio.

One decode step reads every weight once, so at batch 1 its time should follow the bytes per step: int8 reads a
quarter of float32's bytes and should decode up to 4× faster where its kernel streams int8 at the float32 GEMV's
bandwidth. Prefill reuses each weight for every prompt token and is compute-bound, so fewer bytes should barely help
it. The formats take turns inside each repeat (A, B, C, A, B, C ...), so a busy machine slows them alike; the raw
per-repeat times are kept, the medians are what a reader compares.
"""

import statistics
from dataclasses import dataclass, replace

from decoding.clock import Timer
from decoding.forward import forward_one
from decoding.models import LoadedModel
from decoding.timing.plans import filler_ids
from decoding.timing.sweeps import cached_loop
from decoding.watch import Watch


@dataclass
class Speed:
    prefill_ms: list[float]  # one prefill of the long prompt per repeat
    decode_ms: list[float]  # the median decode step of each repeat

    @property
    def prefill_median(self) -> float:
        return statistics.median(self.prefill_ms)

    @property
    def decode_median(self) -> float:
        return statistics.median(self.decode_ms)


def measure_speed(
    lm: LoadedModel, models: dict, prefill_tokens: int, decode_tokens: int, repeats: int, watch: Watch | None = None
) -> dict[str, Speed]:
    """Per format (name -> model): prefill of `prefill_tokens` and greedy decode steps, interleaved, warmed up."""
    watch = watch or Watch()
    runs = {name: replace(lm, model=model) for name, model in models.items()}
    long_prompt, short_prompt = filler_ids(lm, prefill_tokens), filler_ids(lm, 16)
    speeds = {name: Speed([], []) for name in models}
    names = list(models)
    for r in range(-1, repeats):  # repeat -1 is the warm-up, not kept
        order = names[r % len(names) :] + names[: r % len(names)] if r >= 0 else names
        for name in order:
            watch.check()
            with Timer(lm.device) as t:
                forward_one(runs[name], long_prompt, None, 0)
            loop = cached_loop(runs[name], short_prompt, decode_tokens + 1, watch)
            if r >= 0:
                speeds[name].prefill_ms.append(t.ms)
                speeds[name].decode_ms.append(statistics.median(loop.ms[1:]))  # step 0 is the short prefill
        watch.on_progress((r + 2) / (repeats + 1), f"timed round {r + 2} of {repeats + 1}")
    return speeds
