"""Temperature 0, alone and in batches: run the batching tab's default experiment from the command line.

    .venv/bin/python bench/nondeterminism.py [--prompt TEXT] [--dtype bfloat16] [--condition padded]
        [--batch-sizes 1,2,4,8] [--new-tokens 12] [--no-invariant] [--many] [--threads N] [--model smollm2-135m]

Prints progress to stderr and, as its last line, one JSON object: model, device, dtype, condition,
divergent_runs (batch sizes whose row 0 left the solo text), divergent_runs_batch_invariant,
distinct_completions (distinct texts among the solo run and the batched row 0s), per-batch first divergence
and max logit noise, throughput with and without batch invariance, and seconds. --many adds the many-runs tally.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from decoding.models import BUNDLED
from decoding.nondeterminism.batchmates import CONDITIONS, DTYPE_NAMES
from decoding.nondeterminism.causes import causes
from decoding.nondeterminism.experiment import DEFAULTS, run_batching_experiment
from decoding.nondeterminism.tally import many_runs
from decoding.watch import Watch


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=BUNDLED)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=DEFAULTS["dtype"], choices=DTYPE_NAMES)
    parser.add_argument("--prompt", default=DEFAULTS["prompt"])
    parser.add_argument("--condition", default=DEFAULTS["condition"], choices=CONDITIONS)
    parser.add_argument("--batch-sizes", default=",".join(map(str, DEFAULTS["batch_sizes"])))
    parser.add_argument("--new-tokens", type=int, default=DEFAULTS["new_tokens"])
    parser.add_argument("--no-invariant", action="store_true", help="skip the batch-invariant runs")
    parser.add_argument("--many", action="store_true", help="also run the many-runs tally (slow)")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (on a busy 2-core machine, 1 is steadier)"
    )
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    watch = Watch(on_progress=lambda f, msg: print(f"[{f:4.0%}] {msg}", file=sys.stderr, flush=True))
    start = time.perf_counter()
    sizes = [int(b) for b in args.batch_sizes.split(",") if b.strip()]
    e = run_batching_experiment(
        args.model,
        args.prompt,
        sizes,
        args.condition,
        args.new_tokens,
        not args.no_invariant,
        watch=watch,
        dtype=args.dtype,
        device=args.device,
    )
    out = summary(e)
    if args.many:
        t = many_runs(
            e.model,
            DEFAULTS["many_prompts"],
            DEFAULTS["many_batch_sizes"],
            CONDITIONS,
            args.new_tokens,
            watch=watch,
            dtype=args.dtype,
            device=args.device,
        )
        out["many_runs"] = {
            "runs": t.runs,
            "distinct": t.distinct,
            "most_common_share": t.most_common_share,
            "per_prompt": [{k: p[k] for k in ("prompt", "runs", "distinct")} for p in t.per_prompt],
            "seconds": t.seconds,
        }
    out["seconds"] = time.perf_counter() - start
    out["threads"] = torch.get_num_threads()
    return out


def summary(e) -> dict:
    inv = {r.batch_size: r for r in e.invariant_rows}
    per_batch = [
        {
            "batch_size": r.batch_size,
            "first_divergence": r.first_divergence,
            "gap_at_divergence": None if r.first_divergence is None else r.gap[r.first_divergence],
            "max_noise": r.max_noise,
            "seconds": r.seconds,
            "invariant_first_divergence": inv[r.batch_size].first_divergence if r.batch_size in inv else None,
            "invariant_max_noise": inv[r.batch_size].max_noise if r.batch_size in inv else None,
        }
        for r in e.rows
    ]
    return {
        "model": e.model,
        "device": e.device,
        "dtype": e.dtype,
        "condition": e.condition,
        "prompt": e.prompt,
        "new_tokens": e.new_tokens,
        "batch_sizes": [1] + [r.batch_size for r in e.rows],
        "divergent_runs": len(e.divergent),
        "divergent_runs_batch_invariant": len(e.divergent_invariant),
        "distinct_completions": len({r.text for r in [e.solo, *e.rows]}),
        "distinct_completions_batch_invariant": len({r.text for r in [e.solo, *e.invariant_rows]}),
        "per_batch": per_batch,
        "tokens_per_s": e.tokens_per_s,
        "causes": causes(e),
        "solo_text": e.solo.text,
        "texts": {r.batch_size: r.text for r in e.rows},
        "experiment_seconds": e.seconds,
    }


if __name__ == "__main__":
    print(json.dumps(main(), default=float))
