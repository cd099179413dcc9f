"""Where a format's drift comes from: each format applied to the layers only, the head only, or both, on the
bundled model, scored against float32 on the held-out text.

    .venv/bin/python bench/quantization_parts.py [--tokens N] [--formats as\\ stored int4 ...]

The bundled GGUF stores its layers in Q4_1 and its LM head in Q8_0, so "as stored" and int4 on the layers only
should agree with float32 at every position (KL 0): all of int4's drift is then the head's. Per format and part:
top-1 agreement, mean KL (nats), perplexity and the weight bytes a decode step reads. Quality does not depend on
the machine's speed; the copies are built one at a time (each ~540 MB). Prints one line per row to stderr and one
JSON object as its last line.
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from decoding.models import BUNDLED, load_model  # noqa: E402
from decoding.quantization.formats import FORMATS, PARTS  # noqa: E402
from decoding.quantization.model import bytes_per_step, quantize_model  # noqa: E402
from decoding.quantization.quality import heldout_ids, measure_quality  # noqa: E402


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=None, help="the first N held-out tokens (default: all)")
    parser.add_argument("--formats", nargs="+", default=[n for n in FORMATS if n != "float32"])
    args = parser.parse_args(argv)
    lm = load_model(BUNDLED, device="cpu", dtype="float32")
    ids = heldout_ids(lm.tokenizer, args.tokens)
    rows = []
    for name in args.formats:
        for part in PARTS:
            start = time.perf_counter()
            model = quantize_model(lm.model, name, part=part)
            if model is lm.model:  # this part of this format rounds nothing (int4, head kept on the head)
                continue
            q = measure_quality(lm.model, {name: model}, ids)[name]
            row = dict(
                format=name,
                part=part,
                top1_agreement=q.top1_agreement,
                kl_mean=q.kl_mean,
                perplexity=q.perplexity,
                bytes_per_step=bytes_per_step(model),
                positions=q.positions,
                seconds=round(time.perf_counter() - start, 1),
            )
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
            del model
    return {"model": lm.label, "positions": len(ids) - 1, "rows": rows}


if __name__ == "__main__":
    print(json.dumps(main()))
