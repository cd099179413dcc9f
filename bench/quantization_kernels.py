"""Which low-bit GEMV kernels are fast on this machine? One token's matrix-vector products, per weight format.

    .venv/bin/python bench/quantization_kernels.py [--repeats 7] [--quick]

Two workloads the size of the bundled model (SmolLM2-135M): the body (30 layers × 7 linears, run one after the other
as one decode step runs them, so no matrix stays in cache) and the LM head (49152 × 576). Every kernel runs on the
same random weights; the kernels take turns inside each repeat (A, B, C, A, B, C, ...) so a busy machine slows them
alike. Reported per kernel: the median ms of one pass, the weight bytes it read, GB/s of those bytes, and its
speed-up over float32 (the ratio of medians). Prints progress to stderr and one JSON object as its last line.
torchao is not a dependency of the app (no format it serves uses it): its rows need `pip install torchao`, and
without it they appear under "errors".
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

HIDDEN, INTER, KV, LAYERS, VOCAB = 576, 1536, 192, 30, 49152
LAYER_SHAPES = [(HIDDEN, HIDDEN), (KV, HIDDEN), (KV, HIDDEN), (HIDDEN, HIDDEN), (INTER, HIDDEN), (INTER, HIDDEN)]
LAYER_SHAPES += [(HIDDEN, INTER)]  # q, k, v, o, gate, up, down: (out, in)


def int8_per_channel(w):
    """Symmetric int8, one scale per output row: w ≈ q * s."""
    s = (w.abs().amax(1) / 127).clamp(min=1e-12)  # (N,)
    return torch.round(w / s[:, None]).clamp(-127, 127).to(torch.int8), s


def int4_groups(w, group):
    """Asymmetric int4 per group of `group` inputs (Q4_1's grid): w ≈ q * scale + min, q in 0..15."""
    n, k = w.shape
    wg = w.reshape(n, k // group, group)  # (N, G, g)
    lo, hi = wg.amin(-1), wg.amax(-1)  # (N, G)
    scale = ((hi - lo) / 15).clamp(min=1e-12)
    q = torch.round((wg - lo[..., None]) / scale[..., None]).clamp(0, 15).to(torch.int32).reshape(n, k)
    return q, scale, lo


# --- kernels: each `make(w)` returns (run(x) -> y, weight bytes) ---


def make_float(dtype):
    def make(w):
        w = w.to(dtype).contiguous()
        return (lambda x: F.linear(x.to(dtype), w)), w.numel() * w.element_size()

    return make


def make_int8pack(w):
    q, s = int8_per_channel(w)
    return (lambda x: torch._weight_int8pack_mm(x, q, s)), q.numel() + s.numel() * 4


def make_int8_dequant(w):
    q, s = int8_per_channel(w)
    return (lambda x: F.linear(x, q.to(x.dtype) * s[:, None])), q.numel() + s.numel() * 4


def _rowdot(x, q, s):
    # x: (1, K), q: (N, K) int8 -> (1, N); a reduction inductor fuses with the int8 -> float cast
    return (x[:, None, :] * q.to(x.dtype)).sum(-1) * s


_compiled_rowdot = None


def make_int8_compiled(w):
    global _compiled_rowdot
    if _compiled_rowdot is None:
        _compiled_rowdot = torch.compile(_rowdot, dynamic=False)
    q, s = int8_per_channel(w)
    return (lambda x: _compiled_rowdot(x, q, s)), q.numel() + s.numel() * 4


def make_dynamic(w):
    lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=False)
    lin.weight.data.copy_(w)
    qlin = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(lin), {torch.nn.Linear}, dtype=torch.qint8)
    return qlin, w.numel() + w.shape[0] * 8


def make_int4pack(group):
    def make(w):
        q, scale, lo = int4_groups(w, group)
        packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, 1)  # (N, K/2) uint8
        # the kernel computes (q - 8) * scale + zero, so zero = min + 8 * scale
        sz = torch.stack([scale, lo + 8 * scale], -1).transpose(0, 1).contiguous()  # (G, N, 2)
        nbytes = packed.numel() + sz.numel() * 4
        return (lambda x: torch.ops.aten._weight_int4pack_mm_for_cpu(x, packed, group, sz)), nbytes

    return make


def make_torchao(kind, compiled=False):
    def make(w):
        from torchao.quantization import Int4WeightOnlyConfig, Int8WeightOnlyConfig, quantize_

        lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=False)
        lin.weight.data.copy_(w)
        config = Int8WeightOnlyConfig() if kind == "int8" else Int4WeightOnlyConfig(32, int4_packing_format="opaque")
        quantize_(lin, config)
        scales = w.shape[0] * (4 if kind == "int8" else 8 * w.shape[1] // 32)
        nbytes = w.numel() * (1 if kind == "int8" else 0.5) + scales
        return (torch.compile(lin, dynamic=False) if compiled else lin), int(nbytes)

    return make


KERNELS = {
    "float32 F.linear": make_float(torch.float32),
    "bfloat16 F.linear": make_float(torch.bfloat16),
    "int8 _weight_int8pack_mm": make_int8pack,
    "int8 dequant + F.linear": make_int8_dequant,
    "int8 torch.compile fused dequant GEMV": make_int8_compiled,
    "int8 quantize_dynamic (fbgemm, activations per tensor)": make_dynamic,
    "int4 _weight_int4pack_mm_for_cpu g32": make_int4pack(32),
    "int4 _weight_int4pack_mm_for_cpu g64": make_int4pack(64),
    "torchao int8 weight-only": make_torchao("int8"),
    "torchao int8 weight-only + torch.compile": make_torchao("int8", compiled=True),
    "torchao int4 weight-only g32": make_torchao("int4"),
}


def build(make, weights):
    """One kernel over a list of weights: the runs and the bytes they read in all."""
    runs, nbytes = zip(*(make(w) for w in weights))
    return list(runs), sum(nbytes)


def one_pass(runs, inputs, device) -> float:
    from decoding.clock import Timer

    with Timer(device) as t:
        for run, x in zip(runs, inputs):
            run(x)
    return t.ms


@torch.inference_mode()
def survey(repeats: int, layers: int) -> dict:
    torch.manual_seed(0)
    cpu = torch.device("cpu")
    body = [torch.randn(shape) * 0.02 for _ in range(layers) for shape in LAYER_SHAPES]
    workloads = {"body": body, "lm_head": [torch.randn(VOCAB, HIDDEN) * 0.02]}
    inputs = {k: [torch.randn(1, w.shape[1]) for w in ws] for k, ws in workloads.items()}
    built, errors = {}, {}
    for name, make in KERNELS.items():
        try:
            built[name] = {k: build(make, ws) for k, ws in workloads.items()}
            for k, (runs, _) in built[name].items():  # warm-up: compile, pack, first touch
                one_pass(runs, inputs[k], cpu), one_pass(runs, inputs[k], cpu)
            print(f"built {name}", file=sys.stderr, flush=True)
        except Exception as err:  # a kernel this build of torch lacks is a finding, not a failure
            errors[name] = f"{type(err).__name__}: {err}"[:300]
            built.pop(name, None)
            print(f"no {name}: {errors[name]}", file=sys.stderr, flush=True)
    times = {name: {k: [] for k in workloads} for name in built}
    for r in range(repeats):
        order = list(built)[r % len(built) :] + list(built)[: r % len(built)]  # rotate who goes first
        for name in order:
            for k, (runs, _) in built[name].items():
                times[name][k].append(one_pass(runs, inputs[k], cpu))
        print(f"repeat {r + 1}/{repeats}", file=sys.stderr, flush=True)
    return report(built, times, errors)


def report(built, times, errors) -> dict:
    base = {k: statistics.median(v) for k, v in times["float32 F.linear"].items()}
    kernels = {}
    for name, parts in built.items():
        row = {}
        for k, (_, nbytes) in parts.items():
            ms = statistics.median(times[name][k])
            row[k] = {"ms": round(ms, 3), "weight_mb": round(nbytes / 1e6, 1), "gb_s": round(nbytes / ms / 1e6, 2)}
            row[k]["speedup"] = round(base[k] / ms, 2)
            row[k]["raw_ms"] = [round(t, 3) for t in times[name][k]]
        kernels[name] = row
    return {"device": cpu_name(), "threads": torch.get_num_threads(), "kernels": kernels, "errors": errors}


def cpu_name() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        model = next(line.split(":", 1)[1].strip() for line in lines if line.startswith("model name"))
    except (OSError, StopIteration):
        model = "cpu"
    return f"{model}, {torch.backends.cpu.get_cpu_capability()}, torch {torch.__version__}"


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 repeats over 4 layers: checks it runs")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    out = survey(3, 4) if args.quick else survey(args.repeats, LAYERS)
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
