"""Quantization, measured on this machine: speed per weight format (in turns, one run) and quality on the held-out text.

    .venv/bin/python bench/quantization.py [--quick] [--repeats 5] [--model smollm2-135m]

Per format: decode_ms_per_token, prefill_ms (a long prompt), decode_speedup and prefill_speedup against float32,
bytes_per_step, kl_mean and top1_agreement against float32 on the held-out text, kernel (what ran) and simulated.
`int8` is what `--weights int8` serves. Prints progress to stderr and one JSON object as its last line.
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from decoding.models import BUNDLED, load_model
from decoding.quantization.linear import SIMULATED
from decoding.quantization.model import bytes_per_step, kernels_of, quantize_model
from decoding.quantization.quality import heldout_ids, measure_quality
from decoding.quantization.speed import measure_speed
from decoding.timing.limits import device_name
from decoding.watch import Watch

FORMATS = ("float32", "bfloat16", "int8", "int8-activations", "int4")


def log(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr, flush=True)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=BUNDLED)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 repeats, short prompt, 256 tokens of the text")
    parser.add_argument("--tokens", type=int, default=None, help="score only the first N tokens of the text")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    lm = load_model(args.model, args.device, "float32")  # every format is rounded from float32, float32 activations
    models = {name: quantize_model(lm.model, name) for name in FORMATS}
    log(0.0, "formats quantized")
    repeats, prefill, decode = (2, 64, 8) if args.quick else (args.repeats, 256, 32)
    speeds = measure_speed(lm, models, prefill, decode, repeats, Watch(on_progress=log))
    ids = heldout_ids(lm.tokenizer, limit=args.tokens or (256 if args.quick else None))
    quality = measure_quality(lm.model, models, ids)
    log(1.0, f"quality over {len(ids)} tokens")
    base = speeds["float32"]
    formats = {}
    for name, model in models.items():
        s, q, kernels = speeds[name], quality[name], kernels_of(model)
        formats[name] = {
            "decode_ms_per_token": round(s.decode_median, 2),
            "prefill_ms": round(s.prefill_median, 1),
            "decode_speedup": round(base.decode_median / s.decode_median, 3),
            "prefill_speedup": round(base.prefill_median / s.prefill_median, 3),
            "bytes_per_step": bytes_per_step(model),
            "kl_mean": round(q.kl_mean, 5),
            "top1_agreement": round(q.top1_agreement, 4),
            "perplexity": round(q.perplexity, 3),
            "kernel": ", ".join(kernels),
            "simulated": kernels == (SIMULATED,),
            "raw": {"decode_ms": [round(x, 2) for x in s.decode_ms], "prefill_ms": [round(x, 1) for x in s.prefill_ms]},
        }
    return {
        "device": device_name(lm.device),
        "model": lm.label,
        "prefill_tokens": prefill,
        "decode_tokens": decode,
        "repeats": repeats,
        "heldout_tokens": len(ids),
        "seconds": round(time.perf_counter() - started, 1),
        "formats": formats,
    }


if __name__ == "__main__":
    print(json.dumps(main()))
