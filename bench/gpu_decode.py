"""The regime map: decode ms per token against weight bytes, per model size and path, on this machine.

    .venv/bin/python bench/gpu_decode.py [--device auto] [--dtype float32] [--steps 3] [--warmup 1]
                                         [--sizes SmolLM2-135M SmolLM2-360M ...] [--paths eager static captured]
                                         [--no-check] [--threads N]

Sizes: the bundled shape, SmolLM2-360M- and 1.7B-shaped llamas, and on a GPU larger Llama shapes up to what its
memory holds, all with random weights (decoding/timing/regimes.py says why that is fair). Paths: "eager" (the lab's
step) and "static" (the static-cache step, uncaptured) everywhere, "captured" (that step as a CUDA graph) on CUDA:
eager -> static is the static cache's part of the speed-up, static -> captured the graph's. Then the check under it:
the bundled model's real weights beside random ones of its shape, in turns (`--no-check` skips it).

Prints progress to stderr and, as its last line, one JSON object: the machine (its name, torch, threads, load
average), `machine_figure` (the copy bandwidth and matmul peak the MBUs are against), the device and dtype, `points`
(per size and path: decode_ms_per_token, mbu, launches_per_step, weight_bytes, device, dtype, the raw times), the
sizes left out and why, and `real_vs_random`.
"""

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

import torch

from decoding.timing.regimes import PATHS, SIZES, real_vs_random, regime_map
from decoding.watch import Watch


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=None, help="default: float32 on CPU, bfloat16 on CUDA")
    parser.add_argument("--steps", type=int, default=3, help="timed decode steps per size and path")
    parser.add_argument("--warmup", type=int, default=1, help="steps run first and thrown away")
    parser.add_argument("--sizes", nargs="+", choices=[s.name for s in SIZES], default=None)
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=None, help="default: every path this device has")
    parser.add_argument("--no-check", action="store_true", help="skip the real-vs-random check")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: torch's)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    watch = Watch(on_progress=lambda f, msg: print(f"[{f:4.0%}] {msg}", file=sys.stderr, flush=True))
    sizes = tuple(args.sizes) if args.sizes else None
    paths = tuple(args.paths) if args.paths else None
    m = regime_map(args.device, args.dtype, args.steps, args.warmup, sizes=sizes, paths=paths, watch=watch)
    # the map's own `machine` is the bandwidth figure its MBUs are against: kept beside this machine, not over it
    fields = {k: v for k, v in asdict(m).items() if k not in ("points", "machine")}
    figure = asdict(m.machine) if m.machine is not None else None
    out = {"machine": _machine(m.device_name), "machine_figure": figure, **fields}
    out["points"] = [asdict(p) for p in m.points]
    if not args.no_check:
        print("[    ] real weights beside random ones, bundled shape", file=sys.stderr, flush=True)
        out["real_vs_random"] = real_vs_random(args.device, args.dtype)
    return out


def _machine(name: str) -> dict:
    # the load average says whether the machine was quiet: other work on two cores slows small models the most
    load = [round(x, 2) for x in os.getloadavg()]
    return dict(name=name, torch=torch.__version__, threads=torch.get_num_threads(), load_average=load)


if __name__ == "__main__":
    print(json.dumps(main(), default=float))
