"""The constrained-decoding lesson's numbers for the JSON preset ("extract name and age as JSON"), on the bundled
model: N seeded samples without and with the constraint (decoding.constrained.measure.compare), how many parse and
validate, the grammar mask's cost per sampled step beside one decode forward pass, and the share of tokens the
grammar forced (fast-forward). Mask and forward pass are timed in the same runs, so other load on the machine hits
both alike; the device is synchronised before every clock read. Prints one JSON object as its last line.

    .venv/bin/python bench/constrained.py [--n 20] [--seed 0] [--temperature 1.0] [--threads 0]
"""

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from decoding.constrained.measure import compare  # noqa: E402
from decoding.constrained.presets import PRESETS  # noqa: E402
from decoding.models import BUNDLED, load_model  # noqa: E402
from decoding.pipeline import SamplerSettings  # noqa: E402
from decoding.prompts import encode_prompt  # noqa: E402
from decoding.watch import Watch  # noqa: E402

PRESET = "extract name and age as JSON"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    lm = load_model(BUNDLED, device="auto")
    preset = PRESETS[PRESET]
    prompt = encode_prompt(lm.tokenizer, preset.prompt, chat=True, context_length=lm.context_length)
    settings = SamplerSettings(temperature=args.temperature)
    start = time.perf_counter()
    watch = Watch(on_progress=lambda fraction, message: print(f"{fraction:4.0%} {message}", file=sys.stderr))
    result = compare(
        lm,
        prompt,
        preset.constraint,
        settings,
        n=args.n,
        seed=args.seed,
        max_new_tokens=preset.max_new_tokens,
        watch=watch,
    )
    for s in result.unconstrained + result.constrained:
        print(
            f"{'with' if s in result.constrained else 'free'} seed {s.seed}: {s.problem or 'valid'} · {s.text!r}",
            file=sys.stderr,
        )
    out = {
        "preset": PRESET,
        "model": lm.label,
        "device": str(lm.device),
        "dtype": lm.dtype_name,
        "threads": torch.get_num_threads(),
        "n": args.n,
        "temperature": args.temperature,
        "valid_unconstrained": sum(s.valid for s in result.unconstrained),
        "valid_constrained": sum(s.valid for s in result.constrained),
        "mask_ms_p50": round(result.mask_ms_p50, 4),
        "forward_ms_p50": round(result.forward_ms_p50, 3),
        "mask_over_forward": round(result.mask_ms_p50 / result.forward_ms_p50, 5),
        "mask_ms_max": round(max(result.mask_ms), 3),
        "forced_tokens_share": round(result.forced_share, 4),
        "forward_passes_saved": result.calls_saved,
        "logprob_median_unconstrained": round(sorted(s.logprob for s in result.unconstrained)[args.n // 2], 3),
        "logprob_median_constrained": round(sorted(s.logprob for s in result.constrained)[args.n // 2], 3),
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
