"""Many runs: counting distinct greedy completions."""

from decoding.batching.tally import many_runs, plan, tally


def test_tally_counts_distinct_completions_per_prompt_most_common_first():
    t = tally({"p": ["a", "b", "a", "a"], "q": ["x", "x"]})
    assert t.completions == [("a", 3), ("b", 1), ("x", 2)] and t.prompt_index == [0, 0, 1]
    assert t.runs == 6 and t.distinct == 3 and t.most_common_share == 5 / 6
    assert [p["distinct"] for p in t.per_prompt] == [2, 1]


def test_batch_one_runs_once_whatever_the_conditions():
    assert plan([4, 1, 2], ("same-length", "padded")) == [
        (1, "solo"), (2, "same-length"), (4, "same-length"), (2, "padded"), (4, "padded"),
    ]  # fmt: skip


def test_many_runs_on_the_tiny_model_counts_every_run(tiny):
    seen = []
    t = many_runs(tiny, ["Hello", "Once upon"], [1, 2, 3], new_tokens=4, on_progress=lambda f, m: seen.append(f))
    assert t.runs == 2 * 5 and 2 <= t.distinct <= 10 and seen[-1] == 1.0
    assert sum(c for _, c in t.completions) == t.runs
