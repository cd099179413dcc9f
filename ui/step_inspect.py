"""What the inspectors read off the pending distribution before a token is chosen: which logits the
penalties moved, and whether the engines' stage orders keep different sets. Small plain data out."""

from dataclasses import dataclass, replace

import torch

from decoding.loop import Run
from decoding.pipeline import ORDERS, SamplerSettings
from decoding.prompts import token_texts
from visuals.penalties import Moved

MAX_MOVED = 10
MAX_DIFFERING = 8


@dataclass(frozen=True)
class Extras:
    moved: list[Moved]
    penalties_on: bool
    kept_by_order: dict[str, int]
    differing: list[tuple[str, list[str]]]  # (token text, the orders that keep it) where orders disagree


def inspect(run: Run, settings: SamplerSettings) -> Extras:
    penalties = SamplerSettings(
        repetition_penalty=settings.repetition_penalty,
        presence_penalty=settings.presence_penalty,
        frequency_penalty=settings.frequency_penalty,
    )
    on = any(penalties.enabled(n) for n in ("repetition", "presence", "frequency"))
    moved = _moved(run, penalties) if on else []
    kept_by_order, differing = _orders(run, settings)
    return Extras(moved, on, kept_by_order, differing)


def _moved(run: Run, penalties: SamplerSettings) -> list[Moved]:
    p = run.preview(penalties)
    changed = torch.nonzero(p.final != p.raw).flatten()  # (M,)
    ids = changed[torch.argsort(p.raw[changed], descending=True)][:MAX_MOVED].tolist()
    texts = token_texts(run.lm.tokenizer, ids)
    return [Moved(i, t, float(p.raw[i]), float(p.final[i])) for i, t in zip(ids, texts)]


def _orders(run: Run, settings: SamplerSettings) -> tuple[dict[str, int], list[tuple[str, list[str]]]]:
    kept = {o: run.preview(replace(settings, order=o)).removed_by == -1 for o in ORDERS}  # each (V,) bool
    masks = torch.stack(list(kept.values()))  # (3, V)
    disagree = torch.nonzero(masks.any(0) & ~masks.all(0)).flatten()  # (D,)
    raw = run.logits[disagree]
    ids = disagree[torch.argsort(raw, descending=True)][:MAX_DIFFERING].tolist()
    texts = token_texts(run.lm.tokenizer, ids)
    differing = [(t, [o for o in ORDERS if bool(kept[o][i])]) for i, t in zip(ids, texts)]
    return {o: int(m.sum()) for o, m in kept.items()}, differing


def orders_markdown(extras: Extras | None, current: str) -> str:
    if extras is None:
        return "Engine order: press Prefill to compare the orders on the current step."
    counts = " · ".join(
        f"**{o}** keeps {n:,}" + (" (yours)" if o == current else "") for o, n in extras.kept_by_order.items()
    )
    if not extras.differing:
        return f"Engine order, this step: {counts}. The kept sets are identical here."
    rows = ", ".join(f"`{t.replace(' ', '␣')}` (kept by {', '.join(orders)})" for t, orders in extras.differing)
    return f"Engine order, this step: {counts}. **They differ** on: {rows}."
