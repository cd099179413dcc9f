"""Plain decoding beside speculative decoding, on the same prompt and settings, in the same process.

The baseline is the lab's own loop without its recording (`decoding.loop` keeps top-N candidates and text per
step, which a speed comparison should not charge to either side): prefill, then one forward pass per token, the
same pipeline and selection. Each pass is timed with a sync before the clock; time spent waiting for the model's
turn on a shared server is not counted, on either side.
"""

from dataclasses import dataclass, field

import torch

from decoding.clock import Timer
from decoding.forward import forward_one
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings, process, select
from decoding.speculative.records import SpecResult, summary
from decoding.speculative.run import SpecRun
from decoding.watch import Watch


@dataclass
class PlainResult:
    token_ids: list[int] = field(default_factory=list)
    prefill_ms: float = 0.0
    token_ms: list[float] = field(default_factory=list)  # per token: select + the forward pass that follows


def plain_decode(
    lm: LoadedModel, prompt_ids, settings: SamplerSettings, max_new_tokens: int, seed: int = 0, watch=None
) -> PlainResult:
    """One token per forward pass, to an end-of-sequence token or `max_new_tokens`."""
    watch, out = watch or Watch(), PlainResult()
    generator = torch.Generator(device=lm.device).manual_seed(int(seed))
    ids = list(prompt_ids)
    with Timer(lm.device) as t:
        logits, cache = forward_one(lm, ids, None, 0)
    out.prefill_ms = t.ms
    while len(out.token_ids) < max_new_tokens:
        watch.check()
        with Timer(lm.device) as t:
            token = select(process(logits, settings, ids, out.token_ids).final, settings, generator)
            ids.append(token)
            out.token_ids.append(token)
            last = token in lm.eos_ids or len(out.token_ids) >= max_new_tokens
            if not last:
                logits, cache = forward_one(lm, [token], cache, len(ids) - 1)
        out.token_ms.append(t.ms)
        if last:
            break
    return out


@dataclass
class Comparison:
    """The same prompt decoded both ways: did the tokens agree, and how much faster was speculation."""

    spec: SpecResult
    plain: PlainResult

    @property
    def identical(self) -> bool:
        return self.spec.token_ids == self.plain.token_ids

    @property
    def spec_ms(self) -> float:
        return self.spec.prefill_ms + summary(self.spec.rounds)["decode_ms"]

    @property
    def plain_ms(self) -> float:
        return self.plain.prefill_ms + sum(self.plain.token_ms)

    @property
    def speedup(self) -> float:
        """Plain wall time / speculative wall time, prefill included on both sides."""
        return self.plain_ms / self.spec_ms if self.spec_ms > 0 else float("nan")

    def to_dict(self) -> dict:
        return {
            "identical": self.identical,
            "plain_ms": self.plain_ms,
            "speculative_ms": self.spec_ms,
            "speedup": self.speedup,
            **summary(self.spec.rounds),
        }


def race(
    lm: LoadedModel,
    prompt_ids: list[int],
    settings: SamplerSettings,
    *,
    source: str,
    draft_tokens: int,
    exit_layer: int | None,
    seed: int,
    max_new_tokens: int,
    watch: Watch | None = None,
) -> Comparison:
    """A whole speculative run, then plain decoding of the same prompt and settings, both on `lm`: the speed-up as
    measured where `lm` runs, from plain inputs (a ZeroGPU call measures it on its GPU, not on the server's CPU)."""
    watch = watch or Watch()
    run = SpecRun(
        lm,
        list(prompt_ids),
        settings,
        source=source,
        draft_tokens=draft_tokens,
        exit_layer=exit_layer,
        seed=seed,
        max_new_tokens=max_new_tokens,
    )
    spec = run.run_to_end(watch)
    return Comparison(spec, plain_decode(lm, prompt_ids, settings, max_new_tokens, seed, watch))
