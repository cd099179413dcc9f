"""Many runs at temperature 0: how many different texts does "deterministic" greedy decoding give?

The references cite 1,000 greedy runs of one prompt on a GPU server giving 80 distinct completions. Here each
run is one prompt as row 0 of one batch (a batch size and a condition); the runs differ only in their
batchmates, so every distinct completion beyond the first is the batch's doing. On one CPU the same batch
always gives the same text, so the count of distinct completions is the count of batch shapes that mattered.
"""

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from decoding.nondeterminism.batched_decode import greedy_batch
from decoding.nondeterminism.batchmates import CONDITIONS, MANY_PROMPTS, check_inputs, resolve_model, rows_for
from decoding.prompts import encode_prompt
from decoding.watch import Watch


@dataclass
class Tally:
    """Distinct greedy completions of each prompt across batch sizes and conditions."""

    completions: list[tuple[str, int]]  # distinct completion text, count; most common first (within each prompt)
    runs: int
    distinct: int  # summed over prompts
    most_common_share: float  # share of all runs that gave their prompt's most common completion
    per_prompt: list[dict]  # {"prompt", "runs", "distinct", "most_common", "completions", "sources"}
    seconds: float
    prompt_index: list[int] = field(default_factory=list)  # completions[i] belongs to per_prompt[prompt_index[i]]
    # completions[i] came from the runs sources[i]: (batch size, condition) each, in the plan's order
    sources: list[list[tuple[int, str]]] = field(default_factory=list)


def plan(batch_sizes, conditions) -> list[tuple[int, str]]:
    """The (batch size, condition) runs of each prompt; batch 1 once, since alone both conditions are the same."""
    sizes = sorted(set(batch_sizes))
    return ([(1, "solo")] if 1 in sizes else []) + [(b, c) for c in conditions for b in sizes if b > 1]


def tally(texts_per_prompt: dict[str, list[str]], runs: list[tuple[int, str]], seconds: float = 0.0) -> Tally:
    """Count distinct completions per prompt; `texts[i]` of every prompt came from the run `runs[i]`
    (batch size, condition). A pure function of the texts, so it is tested on its own."""
    completions, index, sources, per_prompt = [], [], [], []
    for i, (prompt, texts) in enumerate(texts_per_prompt.items()):
        assert len(texts) == len(runs), "one text per planned run"
        counts = Counter(texts).most_common()
        where = [[run for run, t in zip(runs, texts) if t == text] for text, _ in counts]
        completions += counts
        index += [i] * len(counts)
        sources += where
        per_prompt.append(
            {
                "prompt": prompt,
                "runs": len(texts),
                "distinct": len(counts),
                "most_common": counts[0][1],
                "completions": counts,
                "sources": where,
            }
        )
    n_runs = sum(p["runs"] for p in per_prompt)
    return Tally(
        completions=completions,
        runs=n_runs,
        distinct=sum(p["distinct"] for p in per_prompt),
        most_common_share=sum(p["most_common"] for p in per_prompt) / n_runs if n_runs else 0.0,
        per_prompt=per_prompt,
        seconds=seconds,
        prompt_index=index,
        sources=sources,
    )


def many_runs(
    lm,
    prompts=MANY_PROMPTS,
    batch_sizes=(1, 2, 4, 8),
    conditions=CONDITIONS,
    new_tokens: int = 12,
    on_progress: Callable[[float, str], None] | None = None,
    watch: Watch | None = None,
    *,
    dtype: str | None = None,
    device: str = "auto",
) -> Tally:
    """Every prompt as row 0 of every (batch size, condition), greedy; count the distinct completions."""
    prompts = [prompts] if isinstance(prompts, str) else list(prompts)
    if not prompts:
        raise ValueError("many runs needs at least one prompt")
    for condition in conditions or ("",):
        check_inputs(prompts[0], batch_sizes, condition, new_tokens, dtype)
    lm = resolve_model(lm, dtype, device)
    watch = watch or Watch()
    report = on_progress or watch.on_progress
    runs = plan(batch_sizes, conditions)
    start, texts = time.perf_counter(), {}
    for p_i, prompt in enumerate(prompts):
        ids = encode_prompt(lm.tokenizer, prompt, chat=False, context_length=lm.context_length).ids
        texts[prompt] = []
        for r_i, (size, condition) in enumerate(runs):
            done = (p_i * len(runs) + r_i) / (len(prompts) * len(runs))
            report(done, f"prompt {p_i + 1}/{len(prompts)}: batch of {size} ({condition})")
            rows = rows_for(lm, ids, size, "same-length" if size == 1 else condition, new_tokens)
            run = greedy_batch(lm, rows, new_tokens, watch=watch)
            texts[prompt].append(lm.tokenizer.decode(run.ids[0].tolist(), skip_special_tokens=False))
    report(1.0, "done")
    return tally(texts, runs, time.perf_counter() - start)
