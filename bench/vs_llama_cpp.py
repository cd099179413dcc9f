"""The bundled GGUF run by llama.cpp beside our float32 loop, on the same CPU, in turns: what a user would pick for
speed, and how far our dequantized float32 is from it. An optional extra, never part of `make test`:

    .venv/bin/pip install llama-cpp-python      # builds llama.cpp from source: about 25 minutes on two busy cores
    .venv/bin/python bench/vs_llama_cpp.py [--repeats 5] [--tokens 32] [--prefill 256] [--threads 2]

llama.cpp reads the file as it is (Q4_1: 4-bit weights in groups of 32 with a scale and a minimum, 0.625 bytes a
weight) and multiplies them with activations it rounds to 8 bits (q8_1) on the fly; we read the same weights
dequantized to float32 (4 bytes a weight). Both decode greedily from the same token ids, one token per forward
pass; each repeat times our loop and llama.cpp's in turns, so a busy machine slows both alike. Also reported: how
many of the greedy tokens the two agree on before they first differ. Prints one JSON object as its last line.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

import numpy as np  # noqa: E402

from decoding.models import BUNDLED, bundled_gguf_path, load_model  # noqa: E402
from decoding.timing.limits import device_name  # noqa: E402
from decoding.timing.plans import filler_ids  # noqa: E402
from decoding.timing.sweeps import cached_loop  # noqa: E402
from decoding.watch import Watch  # noqa: E402


def llama(path: Path, threads: int, context: int):
    try:
        from llama_cpp import Llama
    except ImportError:
        sys.exit("llama-cpp-python is not installed: .venv/bin/pip install llama-cpp-python (an optional extra)")
    return Llama(model_path=str(path), n_ctx=context, n_threads=threads, n_batch=512, verbose=False)


def last_logits(model) -> np.ndarray:
    """The logits of the last token evaluated (without logits_all, llama.cpp keeps only those)."""
    return np.ctypeslib.as_array(model._ctx.get_logits(), shape=(model.n_vocab(),))


def llama_greedy(model, prompt: list[int], new_tokens: int) -> tuple[float, list[float], list[int]]:
    """Prefill `prompt`, then `new_tokens` greedy tokens one pass each: (prefill ms, each decode pass's ms, ids)."""
    model.reset()
    started = time.perf_counter()
    model.eval(prompt)
    prefill_ms = (time.perf_counter() - started) * 1e3
    ids, decode_ms = [], []
    for _ in range(new_tokens):
        token = int(np.argmax(last_logits(model)))
        ids.append(token)
        started = time.perf_counter()
        model.eval([token])
        decode_ms.append((time.perf_counter() - started) * 1e3)
    return prefill_ms, decode_ms, ids


def agreed(a: list[int], b: list[int]) -> int:
    """How many tokens two greedy runs share before their first difference."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=32, help="greedy decode steps per repeat")
    parser.add_argument("--prefill", type=int, default=256, help="prompt tokens")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args(argv)
    lm = load_model(BUNDLED, "cpu")
    cpp = llama(bundled_gguf_path(), args.threads, args.prefill + args.tokens + 8)
    prompt = filler_ids(lm, args.prefill)
    short = prompt[:16]
    runs = {"ours": {"prefill_ms": [], "decode_ms": []}, "llama.cpp": {"prefill_ms": [], "decode_ms": []}}
    ids = {}
    for r in range(-1, args.repeats):  # repeat -1 warms both up and is not kept
        for name in ("ours", "llama.cpp") if r % 2 == 0 else ("llama.cpp", "ours"):
            if name == "ours":
                prefill = cached_loop(lm, prompt, 1, Watch()).ms[0]
                loop = cached_loop(lm, short, args.tokens + 1, Watch())
                decode, made = loop.ms[1:], loop.ids[: args.tokens]  # ids[0] came from the prefill, as llama's
            else:
                prefill = llama_greedy(cpp, prompt, 1)[0]
                _, decode, made = llama_greedy(cpp, short, args.tokens)
            if r >= 0:
                runs[name]["prefill_ms"].append(round(prefill, 1))
                runs[name]["decode_ms"].append(round(statistics.median(decode), 2))
                ids[name] = made
        print(f"repeat {r + 2} of {args.repeats + 1}", file=sys.stderr, flush=True)
    summary = {
        name: {
            "decode_ms_per_token": statistics.median(t["decode_ms"]),
            "prefill_ms": statistics.median(t["prefill_ms"]),
            "raw": t,
        }
        for name, t in runs.items()
    }
    ours, theirs = summary["ours"], summary["llama.cpp"]
    return {
        "device": device_name(lm.device),
        "threads": args.threads,
        "model": lm.label,
        "ours": "float32 (the GGUF dequantized), transformers forward",
        "llama.cpp": "Q4_1 as stored, q8_1 activations",
        "decode_speedup_of_llama_cpp": round(ours["decode_ms_per_token"] / theirs["decode_ms_per_token"], 2),
        "prefill_speedup_of_llama_cpp": round(ours["prefill_ms"] / theirs["prefill_ms"], 2),
        "greedy_tokens_agreed": agreed(ids["ours"], ids["llama.cpp"]),
        "greedy_tokens": args.tokens,
        "formats": summary,
    }


if __name__ == "__main__":
    print(json.dumps(main()))
