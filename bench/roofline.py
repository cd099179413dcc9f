"""Measure prefill vs decode on this machine and print the numbers the "Prefill vs decode" tab shows.

    .venv/bin/python bench/roofline.py [--model smollm2-135m] [--device auto] [--dtype float32] [--plan quick]

Prints progress to stderr and, as its last line, one JSON object: device, dtype, model, bandwidth_gbs,
peak_tflops, weight_bytes, prefill_ms, decode_ms, floor_ms, mbu, ... plus the raw times of every sweep.
"""

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from decoding.models import BUNDLED, load_model
from decoding.timing.plans import PLANS, default_plan
from decoding.timing.roofline import roofline_points, summary
from decoding.timing.sweeps import measure_all
from decoding.watch import Watch


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=BUNDLED)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=None)
    parser.add_argument("--plan", default=None, choices=sorted(PLANS), help="default: quick on CPU, gpu on CUDA")
    args = parser.parse_args(argv)
    lm = load_model(args.model, args.device, args.dtype)
    plan = PLANS[args.plan] if args.plan else default_plan(lm.device)
    watch = Watch(on_progress=lambda f, msg: print(f"[{f:4.0%}] {msg}", file=sys.stderr, flush=True))
    m = measure_all(lm, plan, watch)
    out = summary(m)
    out["roofline"] = roofline_points(m)
    out["raw"] = {k: v for k, v in asdict(m).items() if k not in ("shape",)}
    return out


if __name__ == "__main__":
    print(json.dumps(main(), default=float))
