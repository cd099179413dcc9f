"""Two weight formats decoding greedily side by side, one step at a time, and how far apart they are at each step.

Three runs of the project's own loop (decoding.loop.Run) from the same prompt:
1) the reference: float32, greedy (token-equal to generate());
2) the format on the reference's text: each step it is fed the token the reference chose, so its distribution is
   compared with the reference's on the same context (as llama.cpp's --kl-divergence does);
3) the format's own greedy stream, which may part from the reference's at some step and then write text of its own.
Per step: KL(reference || format), Δp of the reference's chosen token and same top-1, from decoding.quantization
.compare, and both distributions over the union of their top tokens. Plain data out, no tensors kept.
"""

from dataclasses import dataclass

import torch

from decoding.forward import kv_cache_bytes
from decoding.loop import Run
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings
from decoding.prompts import Prompt
from decoding.quantization.compare import delta_p, kl_divergence, same_top1

GREEDY = SamplerSettings(temperature=0.0)
TOP = 10  # tokens shown per step: the union of both top lists, cut to this many by the reference's probability


@dataclass(frozen=True)
class Compared:
    """One step: the two next-token distributions on the reference's context, and the tokens each stream chose."""

    reference: int  # the token the reference chose (its argmax)
    own: int | None  # the token the format's own greedy stream chose; None once that stream has stopped
    kl: float  # KL(reference || format), nats
    delta_p: float  # p_format(reference's token) - p_reference(reference's token)
    same_top1: bool
    gap: float  # the reference's top-1 probability minus its top-2: how close the call was
    top_ids: tuple[int, ...]  # shown tokens, most likely under the reference first
    p_reference: tuple[float, ...]  # their probabilities under the reference
    p_format: tuple[float, ...]  # and under the format


def compare_step(ref_logits: torch.Tensor, logits: torch.Tensor, top: int = TOP) -> dict:
    """The metrics of one position from its two (V,) logits: kl, delta_p, same_top1, gap and the shown tokens."""
    p_ref, p = torch.softmax(ref_logits.double(), -1), torch.softmax(logits.double(), -1)  # (V,)
    chosen = ref_logits.argmax()
    union = torch.cat([p_ref.topk(top).indices, p.topk(top).indices]).unique()  # (≤ 2N,)
    shown = union[p_ref[union].argsort(descending=True)][:top]  # (N,)
    first, second = p_ref.topk(2).values.tolist()
    return dict(
        kl=float(kl_divergence(ref_logits, logits)),
        delta_p=float(delta_p(ref_logits, logits, chosen)),
        same_top1=bool(same_top1(ref_logits, logits)),
        gap=first - second,
        top_ids=tuple(shown.tolist()),
        p_reference=tuple(p_ref[shown].tolist()),
        p_format=tuple(p[shown].tolist()),
    )


class SideBySide:
    """The reference and one format decoding the same prompt greedily; `step()` advances all three runs by one."""

    def __init__(self, reference: LoadedModel, quantized: LoadedModel, prompt: Prompt, max_new_tokens: int = 64):
        runs = [Run(lm, prompt, max_new_tokens=max_new_tokens, top_n=1) for lm in (reference, quantized, quantized)]
        self.reference, self.same_context, self.own = runs
        self.steps: list[Compared] = []

    def prefill(self) -> None:
        for run in (self.reference, self.same_context, self.own):
            run.prefill()

    @property
    def done(self) -> bool:
        return self.reference.done

    def step(self) -> Compared:
        """Compare the pending distributions, then each run takes its greedy step (the second, the reference's)."""
        if self.done:
            raise ValueError(f"the reference has stopped ({self.reference.trace.stop_reason}): press Reset")
        metrics = compare_step(self.reference.logits, self.same_context.logits)
        chosen = self.reference.step(GREEDY).token_id
        self.same_context.step(GREEDY, force_id=chosen)
        own = None if self.own.done else self.own.step(GREEDY).token_id
        self.steps.append(Compared(reference=chosen, own=own, **metrics))
        return self.steps[-1]

    def back(self) -> None:
        """Undo the last step in all three runs."""
        if not self.steps:
            raise ValueError("nothing to go back to: no step has been taken yet")
        last = self.steps.pop()
        self.reference.back()
        self.same_context.back()
        if last.own is not None:
            self.own.back()

    def first_divergence(self) -> int | None:
        """The first step (0-based) where the format's own greedy token differs from the reference's; None if none."""
        return next((i for i, s in enumerate(self.steps) if s.own is not None and s.own != s.reference), None)

    def kv_bytes(self) -> int:
        return sum(kv_cache_bytes(r.cache) for r in (self.reference, self.same_context, self.own) if r.cache)


@dataclass(frozen=True)
class Tally:
    steps: int
    same_top1: int
    kl_mean: float
    kl_max: float


def tally(steps: list[Compared]) -> Tally:
    """Same top-1 at a of n steps, the mean and the largest KL."""
    kls = [s.kl for s in steps]
    return Tally(len(steps), sum(s.same_top1 for s in steps), sum(kls) / len(kls) if kls else 0.0, max(kls, default=0))
