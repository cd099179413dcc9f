"""Speculative decoding against plain decoding, greedy, on the copy-heavy preset and on an open prompt.

For each prompt and each draft source: the same greedy tokens? (`greedy_identical`, against our plain loop and
`model.generate()`), the acceptance rate, tokens per target forward pass, and the speed-up = plain wall time /
speculative wall time, both measured in this one run, interleaved (plain, speculative, plain, ...) so that other
load on the machine hits both alike; the median of `--repeats` runs each, prefill included, a sync before every
clock read, after one warm-up of each. transformers' own `generate(prompt_lookup_num_tokens=K)` /
`generate(assistant_early_exit=L)` against `generate()` is measured the same way, for reference. Prints one JSON
object as its last line.

K and L are the tab's presets' own (prompt lookup: the copy-edit preset's K; early exit: the early-exit preset's K
and L) unless given.

    .venv/bin/python bench/speculative.py [--tokens 120] [--repeats 3] [--draft-tokens K] [--exit-layer L]
        [--threads N] [--only copy_heavy/prompt-lookup]
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from decoding.clock import sync  # noqa: E402
from decoding.models import BUNDLED, load_model  # noqa: E402
from decoding.pipeline import SamplerSettings  # noqa: E402
from decoding.prompts import encode_prompt  # noqa: E402
from decoding.speculative.baseline import plain_decode  # noqa: E402
from decoding.speculative.records import EARLY_EXIT, PROMPT_LOOKUP, summary  # noqa: E402
from decoding.speculative.run import SpecRun  # noqa: E402
from ui.speculative.presets import COPY, PRESETS, STORY  # noqa: E402

GREEDY = SamplerSettings(temperature=0)
# (K, L) per draft source, as the tab's presets set them
COPY_EDIT, EARLY = PRESETS["Copy-edit: prompt lookup shines"], PRESETS["Early exit: cheap, mostly wrong"]
PRESET_KL = {PROMPT_LOOKUP: (COPY_EDIT.k, COPY_EDIT.layer), EARLY_EXIT: (EARLY.k, EARLY.layer)}


def timed(lm, fn):
    sync(lm.device)
    start = time.perf_counter()
    out = fn()
    sync(lm.device)
    return (time.perf_counter() - start) * 1e3, out


def generate(lm, ids, n, **kwargs):
    x = torch.tensor([ids], device=lm.device)  # (1, T)
    out = lm.model.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=n, **kwargs)
    return out[0, len(ids) :].tolist()


def measure(lm, ids, source, k, layer, n, repeats) -> dict:
    hf_kwargs = {"prompt_lookup_num_tokens": k} if source == PROMPT_LOOKUP else {"assistant_early_exit": layer}
    runs = {
        "plain": lambda: plain_decode(lm, ids, GREEDY, n).token_ids,
        "speculative": lambda: SpecRun(
            lm, ids, GREEDY, source=source, draft_tokens=k, exit_layer=layer, max_new_tokens=n
        ).run_to_end(),
        "generate": lambda: generate(lm, ids, n),
        "generate_speculative": lambda: generate(lm, ids, n, **hf_kwargs),
    }
    times, outs = {name: [] for name in runs}, {}
    for name, fn in runs.items():  # warm-up
        outs[name] = fn()
    for _ in range(repeats):
        for name, fn in runs.items():
            ms, _ = timed(lm, fn)
            times[name].append(ms)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    spec = outs["speculative"]
    stats = summary(spec.rounds)
    return {
        "greedy_identical": spec.token_ids == outs["plain"] == outs["generate"] == outs["generate_speculative"],
        "tokens": len(spec.token_ids),
        "acceptance_rate": round(stats["acceptance_rate"], 3),
        "tokens_per_target_pass": round(stats["tokens_per_target_pass"], 3),
        "plain_ms": round(med["plain"], 1),
        "speculative_ms": round(med["speculative"], 1),
        "speedup": round(med["plain"] / med["speculative"], 2),
        # the fastest run of each: on a machine others load, the run least disturbed
        "speedup_fastest": round(min(times["plain"]) / min(times["speculative"]), 2),
        "transformers_speedup": round(med["generate"] / med["generate_speculative"], 2),
        "raw_ms": {name: [round(t, 1) for t in ts] for name, ts in times.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=BUNDLED)
    parser.add_argument("--tokens", type=int, default=120)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--draft-tokens", type=int, default=None, help="K for both drafts (default: the presets')")
    parser.add_argument("--exit-layer", type=int, default=None, help="L (default: the early-exit preset's)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own choice)")
    parser.add_argument("--only", default="", help="measure only the cases whose name contains this, e.g. copy")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    lm = load_model(args.model, device="cpu")
    results = {}
    for name, text in (("copy_heavy", COPY), ("open_story", STORY)):
        ids = encode_prompt(lm.tokenizer, text, chat=True).ids
        for source, (k, layer) in PRESET_KL.items():
            key = f"{name}/{source}"
            if args.only not in key:
                continue
            k, layer = args.draft_tokens or k, (args.exit_layer or layer) if source == EARLY_EXIT else None
            results[key] = measure(lm, ids, source, k, layer, args.tokens, args.repeats)
            results[key] |= {"draft_tokens": k, "exit_layer": layer}
            print(key, json.dumps(results[key]), file=sys.stderr)
    print(
        json.dumps(
            {
                "model": lm.label,
                "device": str(lm.device),
                "dtype": lm.dtype_name,
                "threads": torch.get_num_threads(),
                "new_tokens": args.tokens,
                "results": results,
            }
        )
    )


if __name__ == "__main__":
    main()
