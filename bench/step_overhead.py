"""What the instrumented loop costs per token, next to the bare forward pass and model.generate().

Three ways to produce the same greedy tokens, measured in one run and interleaved round by round so
that other load on the machine hits all three alike:
- loop: `Run.step` (pipeline, selection, the step record, stop checks, then the decode forward pass);
- forward: `decoding.forward.forward_one` with the KV cache and an argmax, nothing else;
- generate: `model.generate()` greedy with min_new_tokens = max_new_tokens, timed between consecutive
  calls of a do-nothing logits processor (one call per generated token).
Each per-token time covers one decode forward pass; prefill is excluded, a warm-up run of each comes first,
and the device is synchronised before every clock read. Prints one JSON object as its last line.

    .venv/bin/python bench/step_overhead.py [--tokens 32] [--rounds 3] [--model smollm2-135m] [--threads 1]
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from decoding.clock import sync
from decoding.forward import forward_one  # noqa: E402
from decoding.loop import Run  # noqa: E402
from decoding.models import BUNDLED, load_model  # noqa: E402
from decoding.pipeline import SamplerSettings  # noqa: E402
from decoding.prompts import encode_prompt  # noqa: E402

GREEDY = SamplerSettings(temperature=0)
PROMPT = "The history of the Roman Empire began"  # raw text, so an end-of-turn token is unlikely


def loop_ms(lm, prompt, n: int) -> list[float]:
    run = Run(lm, prompt, max_new_tokens=n + 1)
    run.prefill()
    times = []
    for _ in range(n):
        if run.done:  # an early end-of-sequence: keep what was measured
            break
        sync(lm.device)
        start = time.perf_counter()
        run.step(GREEDY)
        sync(lm.device)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def forward_ms(lm, prompt, n: int) -> list[float]:
    logits, cache = forward_one(lm, prompt.ids, None, 0)  # (V,)
    position, times = len(prompt.ids), []
    for _ in range(n):
        sync(lm.device)
        start = time.perf_counter()
        token = int(torch.argmax(logits))
        logits, cache = forward_one(lm, [token], cache, position)
        sync(lm.device)
        times.append((time.perf_counter() - start) * 1e3)
        position += 1
    return times


class _Clock:
    """A logits processor that changes nothing and notes the time it was called: once per token."""

    def __init__(self, device):
        self.device, self.stamps = device, []

    def __call__(self, input_ids, scores):
        sync(self.device)
        self.stamps.append(time.perf_counter())
        return scores


@torch.inference_mode()
def generate_ms(lm, prompt, n: int) -> list[float]:
    ids = torch.tensor([prompt.ids], device=lm.device)  # (1, T)
    clock = _Clock(lm.device)
    lm.model.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        do_sample=False,
        max_new_tokens=n + 1,
        min_new_tokens=n + 1,
        logits_processor=[clock],
        pad_token_id=lm.tokenizer.pad_token_id,
    )
    return [(b - a) * 1e3 for a, b in zip(clock.stamps, clock.stamps[1:])]


METHODS = {"loop": loop_ms, "forward": forward_ms, "generate": generate_ms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=BUNDLED)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=None)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (1 is steadier on a shared machine)"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    lm = load_model(args.model, device=args.device, dtype=args.dtype)
    prompt = encode_prompt(lm.tokenizer, PROMPT, chat=False)
    for measure in METHODS.values():  # warm-up, discarded
        measure(lm, prompt, 4)
    samples = {name: [] for name in METHODS}
    for r in range(args.rounds):
        for name, measure in METHODS.items():
            times = measure(lm, prompt, args.tokens)
            samples[name] += times
            print(f"round {r + 1}: {name:8s} median {statistics.median(times):7.2f} ms/token", file=sys.stderr)

    medians = {name: statistics.median(times) for name, times in samples.items()}
    result = {
        "loop_ms_per_token": round(medians["loop"], 3),
        "forward_ms_per_token": round(medians["forward"], 3),
        "generate_ms_per_token": round(medians["generate"], 3),
        "loop_vs_generate": round(medians["loop"] / medians["generate"], 3),
        "loop_vs_forward": round(medians["loop"] / medians["forward"], 3),
        "device": str(lm.device),
        "dtype": lm.dtype_name,
        "model": lm.model_id,
        "tokens": args.tokens,
        "rounds": args.rounds,
        "samples": {name: len(times) for name, times in samples.items()},
        "threads": torch.get_num_threads(),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
