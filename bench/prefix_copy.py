"""What a prefix-cache hit costs against what it saves: copying cached KV blocks into a session's contiguous cache
(decoding/serving/prefix.py; vLLM would point a block table at them instead) against computing the same tokens.

For prompts of 1, 2, 4 and 8 blocks of 16 tokens on the bundled model: the time to copy the blocks into a new cache,
the time of a solo prefill over the same tokens, and the bytes one block holds. Rounds alternate the two (A, B, A, B)
so both see the machine in the same state; medians are reported. Prints one JSON object as its last line.

    .venv/bin/python bench/prefix_copy.py [--rounds 7]
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from decoding.forward import forward_one  # noqa: E402
from decoding.models import BUNDLED, load_model  # noqa: E402
from decoding.passes import Pass  # noqa: E402
from decoding.serving.prefix import BLOCK_TOKENS, Hit, PrefixCache  # noqa: E402


def measure(lm, blocks: int, rounds: int) -> dict:
    ids = [(37 * i + 11) % 40000 + 100 for i in range(blocks * BLOCK_TOKENS + 1)]  # the blocks and one token more
    logits, cache = forward_one(lm, ids, None, 0)
    pool = PrefixCache(max_bytes=2**30)
    pool.keep(ids, cache, logits, Pass(0.0))
    hit = Hit(pool.find(ids).blocks)  # the full blocks alone: what a prompt sharing only its start copies
    copy_ms, compute_ms = [], []
    forward_one(lm, ids[:-1], None, 0)  # warm-up
    for _ in range(rounds):
        t0 = time.perf_counter()
        pool.copy_into(hit, lm.model.config)
        copy_ms.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        forward_one(lm, ids[:-1], None, 0)
        compute_ms.append((time.perf_counter() - t0) * 1e3)
    block_bytes = sum(b.nbytes for b in hit.blocks) // blocks
    return {
        "blocks": blocks,
        "tokens": blocks * BLOCK_TOKENS,
        "copy_ms": round(median(copy_ms), 2),
        "compute_ms": round(median(compute_ms), 1),
        "block_bytes": block_bytes,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    lm = load_model(BUNDLED, device="cpu", dtype="float32")
    rows = [measure(lm, n, args.rounds) for n in (1, 2, 4, 8)]
    for row in rows:
        print(
            f"{row['tokens']:4d} tokens: copy {row['copy_ms']} ms, compute {row['compute_ms']} ms",
            file=sys.stderr,
        )
    print(json.dumps({"model": BUNDLED, "cpu_count": os.cpu_count(), "load": os.getloadavg(), "rows": rows}))


if __name__ == "__main__":
    main()
