"""Many runs: counting distinct greedy completions, and which runs gave each."""

from decoding.nondeterminism.tally import many_runs, plan, tally

RUNS = [(1, "solo"), (2, "same-length"), (4, "same-length"), (2, "padded")]


def test_tally_counts_distinct_completions_per_prompt_most_common_first():
    t = tally({"p": ["a", "b", "a", "a"], "q": ["x", "x", "x", "y"]}, RUNS)
    assert t.completions == [("a", 3), ("b", 1), ("x", 3), ("y", 1)] and t.prompt_index == [0, 0, 1, 1]
    assert t.runs == 8 and t.distinct == 4 and t.most_common_share == 6 / 8
    assert [p["distinct"] for p in t.per_prompt] == [2, 2]


def test_tally_says_which_batch_size_and_condition_gave_each_completion():
    t = tally({"p": ["a", "b", "a", "a"], "q": ["x", "x", "x", "y"]}, RUNS)
    assert t.sources == [
        [(1, "solo"), (4, "same-length"), (2, "padded")],
        [(2, "same-length")],
        [(1, "solo"), (2, "same-length"), (4, "same-length")],
        [(2, "padded")],
    ]
    assert t.per_prompt[1]["sources"] == t.sources[2:]


def test_identical_texts_from_every_run_count_once():
    t = tally({"p": ["a"] * 4}, RUNS)
    assert t.completions == [("a", 4)] and t.distinct == 1 and t.most_common_share == 1.0
    assert t.sources == [RUNS]


def test_batch_one_runs_once_whatever_the_conditions():
    assert plan([4, 1, 2], ("same-length", "padded")) == [
        (1, "solo"),
        (2, "same-length"),
        (4, "same-length"),
        (2, "padded"),
        (4, "padded"),
    ]


def test_many_runs_on_the_tiny_model_counts_every_run(tiny):
    seen = []
    t = many_runs(tiny, ["Hello", "Once upon"], [1, 2, 3], new_tokens=4, on_progress=lambda f, m: seen.append(f))
    assert t.runs == 2 * 5 and seen[-1] == 1.0
    assert sum(c for _, c in t.completions) == t.runs
    # every run is accounted for exactly once, under the completion it gave
    runs = plan([1, 2, 3], ("same-length", "padded"))
    for p in t.per_prompt:
        assert sorted(r for where in p["sources"] for r in where) == sorted(runs)
        assert [len(where) for where in p["sources"]] == [n for _, n in p["completions"]]
    assert t.distinct == sum(len(p["sources"]) for p in t.per_prompt)
