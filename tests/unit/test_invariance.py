"""Batch-invariant mode: every row bit-identical to its solo run, for every batch size and condition."""

import pytest
import torch

from decoding.nondeterminism.batched_decode import BatchRun, greedy_batch
from decoding.nondeterminism.batchmates import CONDITIONS, rows_for
from decoding.nondeterminism.experiment import run_batching_experiment
from decoding.nondeterminism.invariance import greedy_invariant, throughput, tokens_per_second


@pytest.mark.parametrize("condition", CONDITIONS)
@pytest.mark.parametrize("batch_size", [2, 3, 5, 8])
def test_every_row_of_an_invariant_batch_equals_its_solo_run(tiny, condition, batch_size):
    rows = rows_for(tiny, tiny.tokenizer("Hello world").input_ids, batch_size, condition, 8)
    inv = greedy_invariant(tiny, rows, 8, keep_rows=range(batch_size))
    for b, row in enumerate(rows):
        solo = greedy_batch(tiny, [row], 8)
        assert torch.equal(inv.logits[b], solo.logits[0]) and torch.equal(inv.ids[b], solo.ids[0])


@pytest.mark.parametrize("condition", CONDITIONS)
def test_invariant_mode_gives_exactly_zero_noise_at_every_batch_size(tiny, condition):
    e = run_batching_experiment(tiny, "Hello world", [1, 2, 4, 8], condition, 8)
    for r in e.invariant_rows:
        assert r.noise == [0.0] * 8 and r.first_divergence is None and r.token_ids == e.solo.token_ids


def test_invariant_steps_count_over_all_rows(tiny):
    seen = []
    greedy_invariant(tiny, [[1, 2], [3]], 4, on_step=seen.append)
    assert seen == [1, 2, 3, 4, 5, 6, 7, 8]


def test_throughput_counts_every_row_and_compares_the_same_batch():
    fast = BatchRun(torch.zeros(4, 10, dtype=torch.long), torch.zeros(1, 10, 3), 2.0)
    slow = BatchRun(torch.zeros(4, 10, dtype=torch.long), torch.zeros(1, 10, 3), 8.0)
    assert tokens_per_second(fast) == 20.0
    assert throughput(fast, slow) == {"batched": 20.0, "invariant": 5.0, "batch_size": 4, "slowdown": 4.0}
