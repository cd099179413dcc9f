"""Temperature 0 is not deterministic: the same prompt, greedy, alone and inside a batch.

Greedy decoding takes the argmax, so it has no randomness; yet the same prompt can give different text
when it runs alone (batch of 1) or as row 0 of a bigger batch. Floating-point sums are not associative,
and a kernel's reduction order depends on the shapes it sees (batch size, padding), so row 0's logits move
by a little "noise". Wherever the solo run's top-1/top-2 gap is small enough for that noise to bridge
(decoding.nondeterminism.flips: gap <= 2 x noise), the argmax may flip, and from there the texts branch.

Two causes are kept apart as conditions: "same-length" (batchmates are copies of the prompt: no padding, only
the batch size changes the kernels' shapes) and "padded" (batchmates are other prompts of other lengths,
left-padded: the batch size changes, and row 0 also carries padding and an attention mask).
The batch-invariant mode (decoding.nondeterminism.invariance) computes each row alone and matches the solo run bit
for bit.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from decoding.nondeterminism.batched_decode import BatchRun, greedy_batch
from decoding.nondeterminism.batchmates import (
    DEFAULT_DTYPE,
    MANY_PROMPTS,
    batchmates,
    check_inputs,
    resolve_model,
    rows_for,
)
from decoding.nondeterminism.invariance import greedy_invariant, throughput, tokens_per_second
from decoding.prompts import encode_prompt, token_texts
from decoding.watch import Watch

# the tab's defaults, measured on the bundled model on a 2-core CPU (bench/nondeterminism.py): in bfloat16 the solo
# run meets an exact tie at step 5 ("wizard" / "woman": bf16 logits sit on a coarse grid) and every batch of 2-16
# breaks it the other way. Padded, row 0's logits move by ~0.4-0.5 at every step; same-length, they stay bit-equal
# until step 5, where one bf16 matmul output rounds differently at batch 2 than at batch 1 (a kernel difference
# crossing a precision boundary) and flips it too. In float32 the gap there is 0.005 and the noise ~3e-5: no flip.
# Batches up to 8 and 12 tokens keep the whole run (normal + invariant) at ~15 s on a quiet 2-core CPU and near a
# minute on a busy one (the invariant rows, computed one by one, are most of it).
DEFAULTS = dict(
    prompt="Once upon a time, in a small village by the sea,",
    dtype=DEFAULT_DTYPE,
    condition="padded",
    batch_sizes=(1, 2, 4, 8),
    new_tokens=12,
    invariant=True,
    many_prompts=MANY_PROMPTS,
    many_batch_sizes=(1, 2, 4, 8),
)


@dataclass
class RowResult:
    """Row 0 of one batch (batch_size 1 = the solo run), compared step by step with the solo run."""

    batch_size: int
    condition: str  # "same-length" | "padded"
    invariant: bool
    token_ids: list[int]  # row 0's generated ids
    token_texts: list[str]  # each id's text (visible leading spaces)
    text: str
    noise: list[float | None]  # per step: max |logit diff| vs solo; None after the first divergence
    gap: list[float]  # per step: the solo run's top1 - top2 logit gap
    agree: list[bool]  # per step: argmax equals solo's (False at the flip and after it)
    first_divergence: int | None
    seconds: float  # wall time of this batch's whole run (all its rows)
    eos_step: int | None = None  # first step where row 0 chose an end-of-sequence id (decoding went on)
    tokens_per_s: float = 0.0  # generated tokens of all rows per second

    @property
    def max_noise(self) -> float:
        return max((n for n in self.noise if n is not None), default=0.0)


@dataclass
class BatchingExperiment:
    model: str
    device: str
    dtype: str
    prompt: str
    prompt_ids: list[int]
    condition: str
    new_tokens: int
    solo: RowResult
    rows: list[RowResult]  # batch sizes > 1, normal batching
    invariant_rows: list[RowResult]  # the same batch sizes, batch-invariant mode (empty if not asked)
    tokens_per_s: dict  # {"batched": float, "invariant": float, "batch_size": int, "slowdown": float}
    seconds: float
    batchmates: list[str] = field(default_factory=list)  # the other rows' prompts in the largest batch

    @property
    def divergent(self) -> list[int]:
        """Batch sizes whose row 0 text left the solo text (normal batching)."""
        return [r.batch_size for r in self.rows if r.first_divergence is not None]

    @property
    def divergent_invariant(self) -> list[int]:
        return [r.batch_size for r in self.invariant_rows if r.first_divergence is not None]


def compare_rows(solo_logits, row_logits, solo_ids, row_ids):
    """Row 0 of a batch against the solo run, step by step -> (noise, gap, agree, first_divergence).

    solo_logits, row_logits: (N, V) float32 logits per step; solo_ids, row_ids: the N chosen ids.
    noise[i] = max |row - solo| while both runs have read the same tokens (up to and including the first
    divergent step), None after it (different contexts: a difference is no longer noise);
    gap[i] = the solo run's top-1 minus top-2 logit; agree[i] = same argmax, False from the first divergence on.
    """
    solo, row = torch.as_tensor(solo_logits, dtype=torch.float32), torch.as_tensor(row_logits, dtype=torch.float32)
    assert solo.shape == row.shape and solo.ndim == 2 and len(solo_ids) == len(row_ids) == solo.shape[0]
    n = solo.shape[0]
    top2 = torch.topk(solo, 2, dim=-1).values  # (N, 2)
    gap = (top2[:, 0] - top2[:, 1]).tolist()
    first = next((i for i in range(n) if int(solo_ids[i]) != int(row_ids[i])), None)
    upto = n if first is None else first + 1
    same_context = (row[:upto] - solo[:upto]).abs().amax(dim=-1).tolist()  # (upto,)
    noise = same_context + [None] * (n - upto)
    agree = [first is None or i < first for i in range(n)]
    return noise, gap, agree, first


class _Progress:
    """The experiment's progress in forward-pass steps, summed over its runs."""

    def __init__(self, report: Callable[[float, str], None], total: int):
        self.report, self.total, self.done = report, total, 0

    def run(self, label: str) -> Callable[[int], None]:
        """The on_step of one run: `k` tokens chosen so far in it."""
        base = self.done

        def on_step(k: int) -> None:
            self.done = base + k
            self.report(min(1.0, self.done / self.total), label)

        return on_step


def _row_result(lm, size, condition, invariant, solo: BatchRun, run: BatchRun) -> RowResult:
    ids = run.ids[0].tolist()
    noise, gap, agree, first = compare_rows(solo.logits[0], run.logits[0], solo.ids[0].tolist(), ids)
    eos = next((i for i, t in enumerate(ids) if t in lm.eos_ids), None)
    text = lm.tokenizer.decode(ids, skip_special_tokens=False)
    return RowResult(
        batch_size=size,
        condition=condition,
        invariant=invariant,
        token_ids=ids,
        token_texts=token_texts(lm.tokenizer, ids),
        text=text,
        noise=noise,
        gap=gap,
        agree=agree,
        first_divergence=first,
        seconds=run.seconds,
        eos_step=eos,
        tokens_per_s=tokens_per_second(run),
    )


def run_batching_experiment(
    lm,
    prompt: str = DEFAULTS["prompt"],
    batch_sizes=DEFAULTS["batch_sizes"],
    condition: str = DEFAULTS["condition"],
    new_tokens: int = DEFAULTS["new_tokens"],
    invariant: bool = True,
    on_progress: Callable[[float, str], None] | None = None,
    watch: Watch | None = None,
    *,
    dtype: str | None = None,
    device: str = "auto",
) -> BatchingExperiment:
    """The solo run, row 0 of every batch size > 1 (normal batching), then the same batches batch-invariant."""
    sizes = [b for b in check_inputs(prompt, batch_sizes, condition, new_tokens, dtype) if b > 1]
    lm = resolve_model(lm, dtype, device)
    watch = watch or Watch()
    start = time.perf_counter()
    ids = encode_prompt(lm.tokenizer, prompt, chat=False, context_length=lm.context_length).ids
    batches = {b: rows_for(lm, ids, b, condition, new_tokens) for b in sizes}
    # progress in forward-pass steps: the solo run, each batch once, each invariant batch row by row
    report = on_progress or watch.on_progress
    progress = _Progress(report, new_tokens * (1 + len(sizes) + (sum(sizes) if invariant else 0)))

    # warm-up, not timed: the first pass at a new shape pays one-off setup (kernel selection, allocations)
    for rows in [[ids], batches[sizes[-1]]] if sizes else [[ids]]:
        greedy_batch(lm, rows, 2, watch=watch)
    solo = greedy_batch(lm, [ids], new_tokens, watch=watch, on_step=progress.run("solo run (batch 1)"))
    rows, inv_rows, runs = [], [], {}
    for b in sizes:
        runs[b] = greedy_batch(lm, batches[b], new_tokens, watch=watch, on_step=progress.run(f"batch of {b}"))
        rows.append(_row_result(lm, b, condition, False, solo, runs[b]))
    inv_run = None
    for b in sizes if invariant else ():
        inv_run = greedy_invariant(
            lm, batches[b], new_tokens, watch=watch, on_step=progress.run(f"batch of {b}, invariant")
        )
        inv_rows.append(_row_result(lm, b, condition, True, solo, inv_run))
    report(1.0, "done")
    # throughput of both modes on the same batch: the largest one
    largest = runs[sizes[-1]] if sizes else solo
    speed = throughput(largest, inv_run) if inv_run is not None else _speed_alone(largest)
    mates = batchmates(sizes[-1]) if sizes and condition == "padded" else []
    return BatchingExperiment(
        model=lm.model_id,
        device=str(lm.device),
        dtype=lm.dtype_name,
        prompt=prompt,
        prompt_ids=list(ids),
        condition=condition,
        new_tokens=new_tokens,
        solo=_row_result(lm, 1, condition, False, solo, solo),
        rows=rows,
        invariant_rows=inv_rows,
        tokens_per_s=speed,
        seconds=time.perf_counter() - start,
        batchmates=mates,
    )


def _speed_alone(run: BatchRun) -> dict:
    return {"batched": tokens_per_second(run), "invariant": None, "batch_size": int(run.ids.shape[0]), "slowdown": None}
