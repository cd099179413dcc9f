"""One step's record: where the tensors of a step become the small plain data of `decoding.trace`.

From the pipeline's output (`Processed`) and the chosen id it keeps the top-N candidates by the model's
probability (and the chosen token, whatever its rank), each with its logit, its probability before and after
the pipeline and the filter that removed it; plus the chosen token's rank, the mass the survivors held and
the entropy of the model's distribution. One copy to the host for all of it.
"""

import math
from dataclasses import dataclass, replace

import torch

from decoding.pipeline import Processed, SamplerSettings
from decoding.prompts import token_texts
from decoding.trace import Candidate, Step


@dataclass(frozen=True)
class Timings:
    """What the loop measured around the step: the forward pass that produced its distribution, and choosing."""

    phase: str  # "prefill" or "decode"
    forward_ms: float
    sample_ms: float
    kv_bytes: int  # KV cache size after that forward pass
    context_len: int  # tokens the model had seen
    rows: int = 1  # sessions that shared that forward pass
    pass_mode: str = "solo"  # decoding.passes.Pass.mode: what batched the pass
    noise: float = 0.0  # how far sharing it could move a logit
    pass_kind: str = "eager"  # decoding.passes.Pass.kind: what ran
    pass_impl: str = "modules"  # decoding.passes.Pass.impl: which implementation computed the logits
    pass_origin: str = "computed"  # decoding.passes.Pass.origin: where they come from


def record_step(
    p: Processed,
    chosen: int,
    *,
    forced: bool,
    settings: SamplerSettings,
    index: int,
    timings: Timings,
    tokenizer,
    top_n,
) -> Step:
    """The Step for choosing `chosen` (forced or not) from `p` with `settings`, as the `index`-th token."""
    probs_before = p.probs_before  # (V,)
    top = _top_candidates(p, probs_before, chosen, top_n, tokenizer)
    above, kept_mass, entropy_nats = _scalars(p, probs_before, chosen)
    pick = next(c for c in top if c.id == chosen)
    return Step(
        index=index,
        token_id=chosen,
        token_text=pick.text,
        prob_before=pick.prob_before,
        prob_after=pick.prob_after,
        rank=int(above) + 1,
        forced=forced,
        top=top,
        stages=list(zip(p.stages, p.kept)),
        kept_mass=kept_mass,
        entropy_bits=entropy_nats / math.log(2),
        settings=settings.to_dict(),
        **_timed(timings),
    )


def timed(step: Step, timings: Timings) -> Step:
    """`step`, recorded by another run from the same distribution, as this run records it: a copy of its own, with
    this run's timings (its pass, its cache) in place of the other's."""
    top = [replace(c) for c in step.top]
    return replace(step, top=top, stages=list(step.stages), settings=dict(step.settings), **_timed(timings))


def _timed(timings: Timings) -> dict:
    """The Step fields that come from the run's own measurements."""
    return dict(
        phase=timings.phase,
        forward_ms=timings.forward_ms,
        sample_ms=timings.sample_ms,
        kv_bytes=timings.kv_bytes,
        context_len=timings.context_len,
        rows=timings.rows,
        pass_mode=timings.pass_mode,
        pass_kind=timings.pass_kind,
        pass_impl=timings.pass_impl,
        pass_origin=timings.pass_origin,
        noise=timings.noise,
    )


def _top_candidates(p: Processed, probs_before: torch.Tensor, chosen: int, top_n: int, tokenizer) -> list[Candidate]:
    probs_after = p.probs_after  # (V,)
    ids = torch.topk(probs_before, min(top_n, probs_before.shape[-1])).indices.tolist()  # (N,)
    if chosen not in ids:
        ids.append(chosen)
    idx = torch.tensor(ids, device=probs_before.device)  # (N,)
    # one copy to the host for the whole table (each .tolist() waits for the device)
    columns = torch.stack([p.raw[idx], probs_before[idx], probs_after[idx], p.removed_by[idx].float()])  # (4, N)
    logits, before, after, removed = columns.tolist()
    return [
        Candidate(
            id=i, text=text, logit=lg, prob_before=b, prob_after=a, removed_by=p.stages[int(r)] if r >= 0 else None
        )
        for i, text, lg, b, a, r in zip(ids, token_texts(tokenizer, ids), logits, before, after, removed)
    ]


def _scalars(p: Processed, probs_before: torch.Tensor, chosen: int) -> list[float]:
    """(tokens with a higher raw logit than the chosen one, the model's mass on the survivors, entropy in nats)."""
    logp = torch.log_softmax(p.raw, dim=-1)  # (V,)
    above = (p.raw > p.raw[chosen]).sum().float()
    kept_mass = probs_before[p.removed_by == -1].sum()
    return torch.stack([above, kept_mass, -(torch.exp(logp) * logp).nansum()]).tolist()  # (3,)
