"""Speculative decoding against plain decoding, greedy, on the copy-heavy preset and on an open prompt.

For each prompt and each draft source: the same greedy tokens? (`greedy_identical`, against our plain loop and
`model.generate()`), the acceptance rate, tokens per target forward pass, and the speed-up = plain wall time /
speculative wall time, both measured in this one run, interleaved (plain, speculative, plain, ...) so that other
load on the machine hits both alike; the median of `--repeats` runs each, prefill included, a sync before every
clock read, after one warm-up of each. transformers' own `generate(prompt_lookup_num_tokens=K)` /
`generate(assistant_early_exit=L)` against `generate()` is measured the same way, for reference. Prints one JSON
object as its last line.

    .venv/bin/python bench/speculative.py [--tokens 60] [--repeats 3] [--draft-tokens 5] [--exit-layer 8]
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
from ui.speculative_tab import COPY, STORY  # noqa: E402

GREEDY = SamplerSettings(temperature=0)


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
        ).run_to_end(),  # fmt: skip
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
        "transformers_speedup": round(med["generate"] / med["generate_speculative"], 2),
        "raw_ms": {name: [round(t, 1) for t in ts] for name, ts in times.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=BUNDLED)
    parser.add_argument("--tokens", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--draft-tokens", type=int, default=5)
    parser.add_argument("--exit-layer", type=int, default=8)
    args = parser.parse_args()
    lm = load_model(args.model, device="cpu")
    results = {}
    for name, text in (("copy_heavy", COPY), ("open_story", STORY)):
        ids = encode_prompt(lm.tokenizer, text, chat=True).ids
        for source, layer in ((PROMPT_LOOKUP, None), (EARLY_EXIT, args.exit_layer)):
            key = f"{name}/{source}"
            results[key] = measure(lm, ids, source, args.draft_tokens, layer, args.tokens, args.repeats)
            print(key, json.dumps(results[key]), file=sys.stderr)
    print(json.dumps({
        "model": lm.label, "device": str(lm.device), "dtype": lm.dtype_name, "threads": torch.get_num_threads(),
        "new_tokens": args.tokens, "draft_tokens": args.draft_tokens, "exit_layer": args.exit_layer,
        "results": results,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
