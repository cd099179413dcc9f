"""What a packed pass costs by its number of rows (decoding/serving/ragged.py), against a solo decode step: the
scheduler packs every waiting session's next token into one pass, so its cost per row decides how a class scales.

For 1, 2, 3, 6 and 12 sessions, each with the same 32-token prompt already in its own cache, on the bundled model
(float32, CPU): the median time of one packed decode pass, as the scheduler runs it (TorchScript's interpreter where
the model fits, decoding/serving/scripted.py) and through transformers' modules, and of the model's linear layers
alone (every projection, the MLPs and the tied LM head, called once each on that many rows: the weight reads of a
pass). One solo decode step (`forward_one`, the path `generate()` agrees with) is the reference. Run it with
OMP_NUM_THREADS=1 to see one core's kernels. `--layout` lays the weights out one way (decoding.layout) instead of the
one the model's load chose on this machine: run it once each way to see what the choice is worth here. `--beside N`
times everything while N other threads do what a server's handlers do (10 ms of Python, then 20 ms asleep, over and
over), with the scheduler's switch interval (decoding/serving/gil.py): what a pass costs while a class is served.
Prints one JSON object as its last line.

    .venv/bin/python bench/packed_rows.py [--rounds 9] [--layout "(out, in)" | "(in, out)"] [--beside 2]
"""

import argparse
import contextlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from statistics import median

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from decoding import layout  # noqa: E402
from decoding.forward import forward_one  # noqa: E402
from decoding.models import BUNDLED, load_model  # noqa: E402
from decoding.serving import gil, ragged, scripted  # noqa: E402

PROMPT = [(37 * i + 11) % 40000 + 100 for i in range(32)]
SESSIONS = (1, 2, 3, 6, 12)


HANDLER_PYTHON_S, HANDLER_SLEEP_S = 0.010, 0.020  # `--beside`: each thread's Python, then its pause


def timed(fn, rounds: int) -> float:
    """The median ms of `fn()` over `rounds` calls, after one warm-up call, each under the scheduler's switch
    interval (decoding/serving/gil.py)."""
    fn()
    times = []
    for _ in range(rounds):
        with gil.urgent():
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return round(median(times), 1)


@contextlib.contextmanager
def beside(threads: int):
    """`threads` threads that do what a server's handlers do meanwhile: Python for 10 ms, then a pause of 20 ms."""
    stop = threading.Event()

    def handler():
        while not stop.is_set():
            start = time.perf_counter()
            while time.perf_counter() - start < HANDLER_PYTHON_S:
                sum(range(200))
            time.sleep(HANDLER_SLEEP_S)

    running = [threading.Thread(target=handler, daemon=True) for _ in range(threads)]
    for thread in running:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        for thread in running:
            thread.join()


def packed_ms(lm, sessions: int, rounds: int, script: bool = True) -> float:
    caches = [forward_one(lm, PROMPT, None, 0)[1] for _ in range(sessions)]
    grown = [0]  # each pass appends one token to every cache

    def one_pass():
        at = len(PROMPT) + grown[0]
        ragged.packed_forward(lm, [ragged.Segment(c, [42], at) for c in caches], script)
        grown[0] += 1

    return timed(one_pass, rounds)


@torch.inference_mode()
def linears_ms(lm, rows: int, rounds: int) -> float:
    layers = [m for m in lm.model.modules() if isinstance(m, torch.nn.Linear)]
    inputs = [torch.randn(1, rows, layer.in_features) for layer in layers]
    return timed(lambda: [layer(x) for layer, x in zip(layers, inputs)], rounds)


def solo_ms(lm, rounds: int) -> float:
    _, cache = forward_one(lm, PROMPT, None, 0)
    grown = [0]

    def one_step():
        forward_one(lm, [42], cache, len(PROMPT) + grown[0])
        grown[0] += 1

    return timed(one_step, rounds)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--layout", choices=(layout.AS_LOADED, layout.TRANSPOSED), default=None)
    parser.add_argument("--beside", type=int, default=0, help="threads running Python meanwhile, as handlers do")
    args = parser.parse_args(argv)
    lm = load_model(BUNDLED, device="cpu", dtype="float32")
    if args.layout is not None:
        layout.lay_out(lm.model, args.layout)
    weights = args.layout or lm.weight_layout
    ragged.install(lm)
    with beside(args.beside):
        solo = solo_ms(lm, args.rounds)
        rows = [
            {
                "sessions": n,
                "packed_ms": packed_ms(lm, n, args.rounds),
                "modules_ms": packed_ms(lm, n, args.rounds, script=False),
                "linears_ms": linears_ms(lm, n, args.rounds),
            }
            for n in SESSIONS
        ]
    print(f"weights laid out {weights}; solo decode step: {solo} ms", file=sys.stderr)
    for row in rows:
        print(
            f"{row['sessions']:2d} sessions: packed pass {row['packed_ms']} ms (through the modules "
            f"{row['modules_ms']} ms), linear layers {row['linears_ms']} ms",
            file=sys.stderr,
        )
    print(
        json.dumps(
            {
                "model": BUNDLED,
                "dtype": "float32",
                "weight_layout": weights,
                "chosen_at_load": lm.weight_layout,
                "torch_threads": torch.get_num_threads(),
                "cpu_count": os.cpu_count(),
                "beside_threads": args.beside,
                "scripted": scripted.fits(lm, []),
                "load": os.getloadavg(),
                "solo_ms": solo,
                "rows": rows,
            }
        )
    )


if __name__ == "__main__":
    main()
