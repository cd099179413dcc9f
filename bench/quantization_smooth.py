"""Can smoothing make fbgemm's fast int8 faithful? SmoothQuant before dynamic int8, per variant: top-1, KL, speed.

    .venv/bin/python bench/quantization_smooth.py [--tokens 768] [--repeats 5] [--quick] [--only NAME ...]

fbgemm's dynamic int8 linear (`quantized.linear_dynamic`: int8 weights, each input quantized on the fly to 7 bits
with one scale per tensor) is the one kernel faster than float32 on this CPU, and the one that fails the quality
bar. Each variant here smooths the bundled model first (decoding/quantization/smooth.py, α the share of the
activation peaks moved into the weights; no α: not smoothed), then runs every linear on that kernel, except the
ones it keeps in float32. Weights are quantized per output channel or per tensor; activations per tensor (what the
kernel does: one scale for all the tokens of a forward pass) or per token (what a decode step of one token gets
anyway; over a window each row's grid is simulated, and its prefill_speedup is null). Quality: top-1 agreement and
mean KL against float32 on the first --tokens tokens of the held-out text. Speed: float32 and each distinct layout
in turns; decode_speedup and prefill_speedup are medians of the per-round ratios (smoothing costs nothing at run
time, so variants that differ only in α share a layout; so do per-token ones). Prints one JSON object last.
"""

import argparse
import copy
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from operator import truediv
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from decoding.models import BUNDLED, load_model
from decoding.quantization import quantizers
from decoding.quantization.quality import heldout_ids, measure_quality
from decoding.quantization.smooth import calibration_maxima, smooth_model
from decoding.quantization.speed import measure_speed
from decoding.timing.limits import device_name
from decoding.watch import Watch


@dataclass(frozen=True)
class Variant:
    alpha: float | None = None  # None: not smoothed
    weights: str = "channel"  # int8 weight scales: per output "channel" or per "tensor"
    rows: str = "tensor"  # activation scales: per "tensor" (the kernel as it is) or per "token"
    keep: tuple[str, ...] = ()  # linears (by name suffix) left in float32
    act_bits: int = 7  # 7: fbgemm's reduce_range on x86, so the int16 sums of u8 × s8 pairs cannot overflow; 8: risk it

    @property
    def layout(self) -> tuple:
        """What decides the decode speed: not α (smoothing is folded into the weights), not the rows (one a step)."""
        return self.weights, self.keep, self.act_bits


VARIANTS = {
    "fbgemm, not smoothed": Variant(),
    **{f"smooth α={a}": Variant(a) for a in (0.5, 0.65, 0.8, 0.9)},
    **{f"smooth α={a}, weights per tensor": Variant(a, weights="tensor") for a in (0.5, 0.8)},
    "smooth α=0.65, activations 8-bit": Variant(0.65, act_bits=8),
    "smooth α=0.65, down_proj float32": Variant(0.65, keep=("down_proj",)),
    "not smoothed, activations per token": Variant(rows="token"),
    **{f"smooth α={a}, activations per token": Variant(a, rows="token") for a in (0.5, 0.65, 0.8)},
    "smooth α=0.65, per token, down_proj float32": Variant(0.65, rows="token", keep=("down_proj",)),
    "smooth α=0.65, per token, lm_head float32": Variant(0.65, rows="token", keep=("lm_head",)),
    "smooth α=0.65, per token, down_proj and lm_head float32": Variant(
        0.65, rows="token", keep=("down_proj", "lm_head")
    ),
}


class DynamicInt8Linear(torch.nn.Module):
    """fbgemm's dynamic int8 linear on one weight: per-channel or per-tensor int8 weights, 7- or 8-bit activations."""

    def __init__(self, weight: torch.Tensor, weights: str, rows: str, act_bits: int):
        super().__init__()
        w = weight.detach().float()
        if weights == "channel":
            q, scale = quantizers.int8_per_channel(w)
            zeros = torch.zeros(w.shape[0], dtype=torch.long)
            qweight = torch._make_per_channel_quantized_tensor(q, scale.double(), zeros, 0)
        else:
            qweight = torch.quantize_per_tensor(w, float(w.abs().max() / 127), 0, torch.qint8)
        self._packed = torch.ops.quantized.linear_prepack(qweight, None)
        self.reduce_range = act_bits == 7
        # per token over many rows: the kernel's arithmetic on each row, simulated (fbgemm's own result to 1e-5;
        # one call per row matched it, ~10x slower): the weights it holds, each row on its own 7-bit grid
        self.rounded = qweight.dequantize().float() if rows == "token" else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1]).contiguous()  # (R, in)
        if self.rounded is not None and rows.shape[0] > 1:
            y = F.linear(fake_quantize_rows(rows), self.rounded)  # (R, out)
        else:
            y = torch.ops.quantized.linear_dynamic(rows, self._packed, self.reduce_range)
        return y.reshape(*x.shape[:-1], y.shape[-1])


def fake_quantize_rows(x: torch.Tensor) -> torch.Tensor:
    """Each row (R, in) rounded as fbgemm rounds a one-row input: an asymmetric 7-bit grid from its min and max."""
    low, high = x.amin(-1, keepdim=True).clamp(max=0), x.amax(-1, keepdim=True).clamp(min=0)  # (R, 1)
    scale = ((high - low) / 127).clamp(min=1e-12)
    zero = torch.round(-low / scale)
    return (torch.round(x / scale + zero).clamp(0, 127) - zero) * scale


@torch.no_grad()
def build(model: torch.nn.Module, maxima: dict, v: Variant) -> torch.nn.Module:
    """A copy of `model`, smoothed with v.alpha, every linear not in v.keep on fbgemm's dynamic int8."""
    out = smooth_model(model, maxima, v.alpha) if v.alpha is not None else copy.deepcopy(model)
    for name, module in list(out.named_modules()):
        if isinstance(module, torch.nn.Linear) and not any(name.endswith(k) for k in v.keep):
            parent, _, child = name.rpartition(".")
            owner = out.get_submodule(parent) if parent else out
            setattr(owner, child, DynamicInt8Linear(module.weight, v.weights, v.rows, v.act_bits))
    return out.eval()


def log(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr, flush=True)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tokens", type=int, default=768, help="score the first N tokens of the held-out text (0: all)"
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 repeats, 64-token prefill, 8 steps, 256 tokens")
    parser.add_argument("--only", nargs="*", default=None, help="variant names to run (default: all)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    lm = load_model(BUNDLED, "cpu")
    maxima = calibration_maxima(lm.model, lm.tokenizer)
    variants = {n: v for n, v in VARIANTS.items() if args.only is None or n in args.only}
    ids = heldout_ids(lm.tokenizer, limit=256 if args.quick else args.tokens or None)
    rows = {}
    for i, (name, v) in enumerate(variants.items()):
        q = measure_quality(lm.model, {name: build(lm.model, maxima, v)}, ids)[name]
        rows[name] = {**asdict(v), "top1_agreement": round(q.top1_agreement, 4), "kl_mean": round(q.kl_mean, 4)}
        rows[name]["perplexity"] = round(q.perplexity, 3)
        log((i + 1) / len(variants) / 2, f"{name}: top-1 {q.top1_agreement:.1%}, KL {q.kl_mean:.3f}")
    layouts = {v.layout: build(lm.model, maxima, v) for v in variants.values()}
    models = {"float32": lm.model, **{repr(k): m for k, m in layouts.items()}}
    repeats, prefill, decode = (2, 64, 8) if args.quick else (args.repeats, 256, 32)
    speeds = measure_speed(lm, models, prefill, decode, repeats, Watch(on_progress=log))
    base = speeds["float32"]
    for name, v in variants.items():
        s = speeds[repr(v.layout)]
        rows[name]["decode_ms_per_token"] = round(s.decode_median, 2)
        # the median of the per-round ratios: both ran in the same round, so a load spike slows them alike
        rows[name]["decode_speedup"] = round(statistics.median(map(truediv, base.decode_ms, s.decode_ms)), 3)
        prefill = statistics.median(map(truediv, base.prefill_ms, s.prefill_ms))
        rows[name]["prefill_speedup"] = round(prefill, 3) if v.rows == "tensor" else None  # per token: simulated
    return {
        "device": device_name(lm.device),
        "heldout_tokens": len(ids),
        "float32_decode_ms_per_token": round(base.decode_median, 2),
        "repeats": repeats,
        "seconds": round(time.perf_counter() - started, 1),
        "variants": rows,
    }


if __name__ == "__main__":
    print(json.dumps(main()))
