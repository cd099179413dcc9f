"""The lesson's measurements as plain rows: each format's bytes and time on this device (in turns, one run), each
real kernel's GB/s on the model's matrices, and each format's quality on the first N tokens of the held-out text
(kept per process: the text and the weights never change).

Rows are dicts of numbers and names, what visuals.quantization.measured draws; no tensor leaves this module.
"""

import threading

from decoding.models import LoadedModel
from decoding.quantization.copies import Copies
from decoding.quantization.formats import BOTH, FORMATS
from decoding.quantization.kernels import REFERENCE as REFERENCE_KERNEL
from decoding.quantization.kernels import kernel_speeds
from decoding.quantization.linear import SIMULATED
from decoding.quantization.model import bytes_per_step, default_kernel, kernels_of, quantize_model
from decoding.quantization.quality import heldout_ids, measure_quality
from decoding.quantization.speed import measure_speed
from decoding.watch import Watch

REFERENCE = "float32"


def speed_rows(
    lm: LoadedModel, names: list[str], prefill_tokens: int, decode_tokens: int, repeats: int, watch: Watch
) -> list[dict]:
    """float32 and each named format timed in turns: bytes per step, median decode ms/token and prefill ms, and each
    repeat's own (`decode_runs_ms`, `prefill_runs_ms`: their spread is this run's noise between turns). The copies
    are built for this run and freed after it (one per format: they must all be there to take turns)."""
    names = [REFERENCE] + [n for n in names if n != REFERENCE]
    models = {}
    for i, name in enumerate(names):
        watch.on_progress(0.0, f"rounding the weights to {name} ({i + 1} of {len(names)})")
        watch.check()
        models[name] = quantize_model(lm.model, name)
    speeds = measure_speed(lm, models, prefill_tokens, decode_tokens, repeats, watch)
    rows = []
    for name, model in models.items():
        kernels = kernels_of(model)
        rows.append(
            dict(
                name=name,
                kernel=", ".join(kernels),
                simulated=kernels == (SIMULATED,),
                bytes=bytes_per_step(model),
                decode_ms=speeds[name].decode_median,
                prefill_ms=speeds[name].prefill_median,
                decode_runs_ms=list(speeds[name].decode_ms),
                prefill_runs_ms=list(speeds[name].prefill_ms),
            )
        )
    return rows


_QUALITY: dict[tuple, dict] = {}
_QUALITY_LOCK = threading.Lock()


def heldout_length(lm: LoadedModel) -> int:
    return len(heldout_ids(lm.tokenizer))


def quality_row(lm: LoadedModel, name: str, tokens: int, copies: Copies, part: str = BOTH) -> dict:
    """Perplexity, mean KL against float32 and top-1 agreement over the first `tokens` tokens of the held-out text,
    with `name` applied to `part` (formats.PARTS), computed once per (model, format, part, tokens) in this process."""
    key = (lm.model_id, str(lm.device), name, part, tokens)
    with _QUALITY_LOCK:
        if key not in _QUALITY:
            model = copies.get(lm, name, part).model
            q = measure_quality(lm.model, {name: model}, heldout_ids(lm.tokenizer, tokens))[name]
            _QUALITY[key] = dict(
                name=name,
                part=part,
                perplexity=q.perplexity,
                kl_mean=q.kl_mean,
                top1_agreement=q.top1_agreement,
                positions=q.positions,
            )
        return _QUALITY[key]


def kernel_rows(lm: LoadedModel, repeats: int, watch: Watch) -> list[dict]:
    """Each real kernel's one-token GEMVs over the layers and the head (float32's first), and whether the app runs
    its format with it on this device."""
    rows = []
    for k in kernel_speeds(lm.model, repeats, watch):
        used = k.kernel == REFERENCE_KERNEL or default_kernel(FORMATS[k.format], lm.device) == k.kernel
        rows.append(
            dict(
                kernel=k.kernel,
                format=k.format,
                layers_ms=k.layers_ms,
                layers_mb=k.layers_bytes / 1e6,
                head_ms=k.head_ms,
                head_mb=k.head_bytes / 1e6,
                used=used,
            )
        )
    return rows
