"""What the logit lens panel costs per step, next to a plain Step, measured interleaved.

Two runs of the same greedy tokens, stepped in turn so that other load on the machine hits both alike:
- plain: `Run.step` as the Step button does it with the panel closed (nothing of the lens computed);
- lens: `decoding.lens.lens_run` (one extra pass over the pending position with every layer's hidden state,
  the final norm and the LM head over all rows in one matmul), then the same `Run.step`.
The difference of the medians is what opening the panel adds to a step. Prefill and one warm-up step of each are
excluded; the device is synchronised before every clock read. Then the curve over the whole finished run
(`decoding.lens.run_agreement`: one pass over its text with every layer's hidden state, the lens at every step),
interleaved with a plain pass over the same text (what a prefill of it costs), `--repeats` times each after one
warm-up. Prints one JSON object as its last line.

    .venv/bin/python bench/lens.py [--tokens 24] [--repeats 3] [--model smollm2-135m] [--threads 2]
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from decoding import lens  # noqa: E402
from decoding.clock import sync  # noqa: E402
from decoding.forward import forward_one  # noqa: E402
from decoding.loop import Run  # noqa: E402
from decoding.models import BUNDLED, load_model  # noqa: E402
from decoding.pipeline import SamplerSettings  # noqa: E402
from decoding.prompts import encode_prompt  # noqa: E402

GREEDY = SamplerSettings(temperature=0)
PROMPT = "The history of the Roman Empire began"


def timed(lm, fn) -> float:
    sync(lm.device)
    start = time.perf_counter()
    fn()
    sync(lm.device)
    return (time.perf_counter() - start) * 1e3


def lens_then_step(run, lens_ms: list[float]) -> None:
    lens_ms.append(lens.lens_run(run).ms)
    run.step(GREEDY)


def whole_run(lm, run, repeats: int) -> dict:
    """The curve over the finished `run`, timed beside a plain pass over the same text, in turn."""
    ids, prompt_len = list(run.ids), len(run.prompt.ids)
    lens.run_agreement(lm, ids, prompt_len), forward_one(lm, ids, None, 0)  # warm-up: the text's shapes
    curve, plain = [], []
    for _ in range(repeats):
        curve.append(lens.run_agreement(lm, ids, prompt_len))
        plain.append(timed(lm, lambda: forward_one(lm, ids, None, 0)))
    curve_ms = statistics.median(a.ms for a in curve)
    return {
        "run_agreement_steps": len(run.generated),
        "run_agreement_ms_median": curve_ms,
        "text_pass_ms_median": statistics.median(plain),
        "ratio_run_agreement_to_text_pass": curve_ms / statistics.median(plain),
        "run_agreement_final_share": curve[0].final_share,
    }


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=24)
    ap.add_argument("--model", default=BUNDLED)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    lm = load_model(args.model, device="cpu")
    prompt = encode_prompt(lm.tokenizer, PROMPT, False, lm.context_length)
    runs = {name: Run(lm, prompt, max_new_tokens=args.tokens + 2) for name in ("plain", "lens")}
    for run in runs.values():
        run.prefill()
        run.step(GREEDY)  # warm-up
    plain, with_lens, lens_only = [], [], []
    for _ in range(args.tokens):
        if any(run.done for run in runs.values()):
            break
        plain.append(timed(lm, lambda: runs["plain"].step(GREEDY)))
        with_lens.append(timed(lm, lambda: lens_then_step(runs["lens"], lens_only)))
    same = runs["plain"].generated == runs["lens"].generated
    out = {
        "model": lm.label,
        "device": str(lm.device),
        "dtype": lm.dtype_name,
        "threads": torch.get_num_threads(),
        "steps": len(plain),
        "plain_step_ms_median": statistics.median(plain),
        "lens_step_ms_median": statistics.median(with_lens),
        "lens_pass_ms_median": statistics.median(lens_only),
        "ratio_lens_to_plain": statistics.median(with_lens) / statistics.median(plain),
        "same_tokens": same,
        **whole_run(lm, runs["lens"], args.repeats),
    }
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
