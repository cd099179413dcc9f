"""The fix: batch-invariant decoding, and what it costs.

A row's logits change with its batchmates because a kernel's reduction order depends on the shapes it sees:
how many rows share the matmul, how long the padded block is, whether attention needs a mask. The simple,
honest way to remove that on stock PyTorch is to compute every row with batch-1 shapes: no padding, no
batchmates, exactly the kernels of the solo run. Then row b of any batch is bit-for-bit the solo run of its
prompt, for every batch size and condition. The price is batching itself: B rows cost B solo runs, so the
throughput falls back toward one row's (measured below on the same batch, both ways).

Production batch-invariant kernels keep the batch and fix the reduction order instead (one split strategy for
matmul, RMSNorm and attention whatever the batch size), at a much smaller cost: Thinking Machines'
batch_invariant_ops (https://thinkingmachines.ai/blog/defeating-nondeterminism-in-llm-inference/) and the
deterministic modes of vLLM and SGLang. Stock PyTorch on a CPU does not expose that choice, so this lab trades
speed for the same guarantee.
"""

from collections.abc import Callable

import torch

from decoding.clock import Timer
from decoding.models import LoadedModel
from decoding.nondeterminism.batched_decode import BatchRun, greedy_batch
from decoding.watch import Watch


def greedy_invariant(
    lm: LoadedModel,
    rows: list[list[int]],
    new_tokens: int,
    keep_rows=(0,),
    watch: Watch | None = None,
    on_step: Callable[[int], None] | None = None,
) -> BatchRun:
    """The batch `rows`, greedy, each row computed alone with batch-1 shapes; same result shape as greedy_batch.
    `on_step(k)` counts steps over all rows (B * new_tokens in all)."""
    on_step = on_step or (lambda k: None)
    ids, kept = [], {}
    with Timer(lm.device) as t:
        for b, row in enumerate(rows):
            run = greedy_batch(lm, [row], new_tokens, (0,), watch, lambda k, done=b * new_tokens: on_step(done + k))
            ids.append(run.ids)  # (1, N)
            if b in keep_rows:
                kept[b] = run.logits[0]  # (N, V)
    logits = torch.stack([kept[b] for b in keep_rows])  # (K, N, V)
    return BatchRun(torch.cat(ids), logits, t.ms / 1e3)  # (B, N)


def tokens_per_second(run: BatchRun) -> float:
    """Generated tokens of all rows per second of wall time (prefill included)."""
    return run.ids.numel() / run.seconds if run.seconds > 0 else float("nan")


def throughput(batched: BatchRun, invariant: BatchRun) -> dict:
    """Both modes on the same batch: tokens/s each, and how many times slower the invariant mode was."""
    assert batched.ids.shape == invariant.ids.shape, "compare the two modes on the same batch"
    fast, slow = tokens_per_second(batched), tokens_per_second(invariant)
    return {
        "batched": fast,
        "invariant": slow,
        "batch_size": int(batched.ids.shape[0]),
        "slowdown": fast / slow if slow > 0 else float("nan"),
    }
