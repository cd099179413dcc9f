"""Greedy decoding of a whole batch at once, the way `model.generate(do_sample=False)` does it.

1) pad: rows of different lengths are left-padded (so every row's next token sits in the last column) and
   an attention mask hides the padding; position ids come from the mask (`cumsum - 1`), as in `generate()`,
   so a padded row sees the same positions as when it runs alone and any difference is numerics, not a bug;
2) prefill: one forward pass over the (B, T) block fills the KV cache;
3) select: a literal argmax per row of a float32 copy of the last position's logits;
4) decode: one forward pass on the B chosen tokens, and repeat.
A fixed number of new tokens is generated (no stop on end-of-sequence): the lesson compares runs token by
token, so every run has the same length; where EOS came is recorded by the caller.
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch

from decoding.clock import Timer
from decoding.models import LoadedModel
from decoding.watch import Watch


@dataclass
class BatchRun:
    """The greedy continuation of every row, and the float32 logits of the rows asked for."""

    ids: torch.Tensor  # (B, N) generated ids
    logits: torch.Tensor  # (K, N, V) float32 logits at each step of the K kept rows
    seconds: float  # wall time of prefill + all decode steps


def pad_id(lm: LoadedModel) -> int:
    """The tokenizer's pad id, else the first EOS id (any id works: the mask hides it)."""
    pad = getattr(lm.tokenizer, "pad_token_id", None)
    return int(pad) if pad is not None else lm.eos_ids[0]


def left_pad(rows: list[list[int]], pad: int, device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Rows of token ids -> (input_ids, attention_mask), both (B, T), padding on the left."""
    if not rows or any(len(r) == 0 for r in rows):
        raise ValueError("every row needs at least one token")
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)  # (B, T)
    mask = torch.zeros((len(rows), width), dtype=torch.long)  # (B, T)
    for b, row in enumerate(rows):
        ids[b, width - len(row) :] = torch.tensor(row, dtype=torch.long)
        mask[b, width - len(row) :] = 1
    return ids.to(device), mask.to(device)


def positions(mask: torch.Tensor) -> torch.Tensor:
    """Position ids from the attention mask, as `generate()` makes them: padding gets 0, real tokens 0, 1, ..."""
    return (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)  # (B, T)


@torch.inference_mode()
def greedy_batch(
    lm: LoadedModel,
    rows: list[list[int]],
    new_tokens: int,
    keep_rows=(0,),
    watch: Watch | None = None,
    on_step: Callable[[int], None] | None = None,
) -> BatchRun:
    """Greedy-decode all `rows` together for exactly `new_tokens` steps; keep the logits of `keep_rows`.
    `watch.check()` runs before every forward pass (cancel); `on_step(k)` after each of the k chosen tokens."""
    watch = watch or Watch()
    with Timer(lm.device) as t:
        ids, logits = _decode(lm, rows, new_tokens, keep_rows, watch, on_step or (lambda k: None))
    return BatchRun(ids.cpu(), logits.cpu(), t.ms / 1e3)


def _decode(lm, rows, new_tokens, keep_rows, watch, on_step):
    # 1) pad
    input_ids, mask = left_pad(rows, pad_id(lm), lm.device)  # (B, T)
    pos = positions(mask)  # (B, T)
    # like generate(): with no padding the mask is dropped, so attention takes its plain causal path
    padded = not bool(mask.all())
    keep = torch.tensor(list(keep_rows), device=lm.device)  # (K,)
    chosen, kept = [], []
    # 2) prefill
    watch.check()
    out = lm.model(
        input_ids=input_ids,
        attention_mask=mask if padded else None,
        position_ids=pos,
        use_cache=True,
        logits_to_keep=1,
    )
    cache = out.cache
    for step in range(new_tokens):
        # 3) select: argmax of the float32 copy (exact conversion, so the same argmax as the model's dtype)
        logits = out.logits[:, -1].to(dtype=torch.float32)  # (B, V)
        next_ids = torch.argmax(logits, dim=-1)  # (B,)
        chosen.append(next_ids)
        kept.append(logits.index_select(0, keep))  # (K, V)
        on_step(step + 1)
        if step == new_tokens - 1:
            break
        # 4) decode: one more column, one more position per row
        watch.check()
        mask = torch.cat([mask, mask.new_ones(mask.shape[0], 1)], dim=-1)  # (B, T + step + 1)
        pos = pos[:, -1:] + 1  # (B, 1)
        out = lm.model(
            input_ids=next_ids[:, None],  # (B, 1)
            attention_mask=mask if padded else None,
            position_ids=pos,
            cache=cache,
            use_cache=True,
        )
        cache = out.cache
    return torch.stack(chosen, dim=1), torch.stack(kept, dim=1)  # (B, N), (K, N, V)
