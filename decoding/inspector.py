"""The step tab's inspectors, read off the pending distribution before a token is chosen: which logits the
penalties moved, and whether the engines' stage orders (`sandbox.compare_orders`) keep different sets.
Small plain data out, token texts included (this is an edge of the loop, where text appears)."""

from dataclasses import dataclass

import torch

from decoding.loop import Run
from decoding.pipeline import PENALTIES, SamplerSettings
from decoding.prompts import token_texts
from decoding.sandbox import compare_orders

MAX_MOVED = 10
MAX_DIFFERING = 8


@dataclass(frozen=True)
class Moved:
    """A token whose logit a penalty changed."""

    id: int
    text: str
    before: float  # the model's logit
    after: float  # after every penalty stage


@dataclass(frozen=True)
class Inspection:
    moved: list[Moved]  # the most likely few tokens the penalties moved
    penalties_on: bool
    kept_by_order: dict[str, int]  # engine order -> tokens it keeps
    differing: list[tuple[str, tuple[str, ...]]]  # (token text, the orders that keep it) where orders disagree


def inspect_step(run: Run, settings: SamplerSettings) -> Inspection:
    """What the penalties did to the pending logits, and what each engine order keeps of them."""
    penalties = SamplerSettings(
        repetition_penalty=settings.repetition_penalty,
        presence_penalty=settings.presence_penalty,
        frequency_penalty=settings.frequency_penalty,
    )
    on = any(penalties.enabled(n) for n in PENALTIES)
    moved = _moved(run, penalties) if on else []
    comparison = compare_orders(run.logits, settings, run.ids, run.generated, max_rows=MAX_DIFFERING)
    texts = token_texts(run.lm.tokenizer, [i for i, _, _ in comparison.differing])
    differing = [(t, keepers) for t, (_, _, keepers) in zip(texts, comparison.differing)]
    return Inspection(moved, on, {o.order: o.kept for o in comparison.orders}, differing)


def _moved(run: Run, penalties: SamplerSettings) -> list[Moved]:
    p = run.preview(penalties)
    changed = torch.nonzero(p.final != p.raw).flatten()  # (M,)
    ids = changed[torch.argsort(p.raw[changed], descending=True)][:MAX_MOVED].tolist()
    texts = token_texts(run.lm.tokenizer, ids)
    return [Moved(i, t, float(p.raw[i]), float(p.final[i])) for i, t in zip(ids, texts)]
