"""The words under the batching lab's charts, from hand-made runs: they must never credit one cause with the
other's effect, and every number they quote is read off the run."""

from decoding.nondeterminism.causes import CAUSES
from decoding.nondeterminism.experiment import BatchingExperiment, RowResult
from decoding.nondeterminism.tally import tally
from visuals.nondeterminism.captions import (
    causes_markdown,
    fix_caption,
    headline,
    noise_caption,
    scatter_caption,
    tally_caption,
    texts_caption,
)

SOLO_TEXTS = [" upon", " a", " time", ",", " there", " lived"]
GAP = [2.0, 0.5, 0.1, 3.0, 1.0, 0.8]


def row(size: int, texts=SOLO_TEXTS, noise=None, first=None, invariant=False) -> RowResult:
    n = len(texts)
    return RowResult(
        batch_size=size,
        condition="padded",
        invariant=invariant,
        token_ids=list(range(n)),
        token_texts=list(texts),
        text="".join(texts),
        noise=noise if noise is not None else [0.0] * n,
        gap=list(GAP),
        agree=[first is None or i < first for i in range(n)],
        first_divergence=first,
        seconds=0.1,
    )


SOLO, SAME = row(1), row(2)
# batch 8 flips at index 2 (" time" -> " moment"): gap 0.1 < 2 x 0.3; afterwards not compared
FLIPPED = row(8, [" upon", " a", " moment", " ago", " the", " sea"], noise=[0.01, 0.02, 0.3, None, None, None], first=2)


def experiment(condition: str, dtype: str = "bfloat16", rows=(SAME, FLIPPED)) -> BatchingExperiment:
    speed = {"batched": 40.0, "invariant": 16.0, "batch_size": 8, "slowdown": 2.5}
    invariant = [row(8, invariant=True)]
    return BatchingExperiment("tiny", "cpu", dtype, "Once", [1], condition, 6, SOLO, list(rows), invariant, speed, 1.0)


def causes(exp: BatchingExperiment) -> str:
    return causes_markdown(exp)


def test_causes_credit_padding_only_in_the_padded_condition():
    padded, same = causes(experiment("padded")), causes(experiment("same-length"))
    padding_row = next(line for line in padded.splitlines() if line.startswith("| **Padding"))
    assert "**yes**" in padding_row
    padding_row = next(line for line in same.splitlines() if line.startswith("| **Padding"))
    assert "**yes**" not in padding_row and "nothing is padded" in padding_row
    kernels = next(line for line in same.splitlines() if line.startswith("| **Batch-size"))
    assert "only cause" in kernels


def test_causes_before_a_run_list_every_cause_with_no_verdict():
    table = causes_markdown()
    rows = [line for line in table.splitlines() if line.startswith("| **")]
    assert len(rows) == len(CAUSES) and all(line.endswith("| — |") for line in rows)


def test_captions_name_the_flip_and_the_cost_of_the_fix():
    exp = experiment("padded")
    assert "Batch 8 diverged at token 3" in texts_caption(exp) and "0.1" in texts_caption(exp)
    assert "1 of 2 batch sizes wrote a different text" in headline(exp) and "padding" in headline(exp)
    fix = fix_caption(exp)
    assert "exactly 0" in fix and "16 tok/s" in fix and "40 tok/s" in fix and "2.5× slower" in fix


def test_a_run_without_flips_says_every_batch_wrote_the_solo_text():
    exp = experiment("same-length", rows=[SAME])
    assert "Every batch wrote exactly the solo text" in headline(exp) and "kernels alone" in headline(exp)
    assert texts_caption(exp).startswith("Row 0 of every batch chose the same token")
    assert "Batch 2: bit-identical to solo at every step" in noise_caption(exp)


def test_noise_caption_quotes_the_largest_noise_and_its_batch():
    assert noise_caption(experiment("padded")).startswith("The largest noise was 0.3 (batch 8).")


def test_scatter_caption_counts_points_below_the_line_and_the_flips():
    text = scatter_caption(experiment("padded"))
    assert "1 had a gap no larger than twice the noise" in text and "1 of those flipped" in text


def test_tally_caption_counts_runs_and_distinct_completions():
    runs = [(1, "solo"), (2, "same-length"), (2, "padded")]
    t = tally({"Once": ["a", "a", "b"], "Twice": ["c", "c", "c"]}, runs, seconds=2.0)
    text = tally_caption(t, sizes=2)
    assert text.startswith("6 greedy runs (2 prompts") and "gave 3 distinct completions" in text
    assert "“Once”: 2 distinct in 3 runs" in text
