"""A format's quality over the held-out text: perplexity, mean KL against float32, top-1 agreement.

The text (heldout.txt beside this file) was written for the project, so no model has seen it. It is read in
windows of `window` tokens, one forward pass each with a fresh context; every position but a window's last
predicts the next token of the text. The reference and each format see exactly the same windows.
"""

import math
from dataclasses import dataclass
from pathlib import Path

import torch

from decoding.quantization.compare import kl_of_log_probs, log_probs, same_top1

HELDOUT = Path(__file__).with_name("heldout.txt")


@dataclass(frozen=True)
class Quality:
    perplexity: float  # exp(mean next-token negative log-likelihood over the text)
    kl_mean: float  # mean KL(float32 || format) per position, nats
    top1_agreement: float  # share of positions where both argmaxes agree, 0..1
    positions: int


def heldout_ids(tokenizer, limit: int | None = None) -> list[int]:
    ids = tokenizer(HELDOUT.read_text(encoding="utf-8"), add_special_tokens=False)["input_ids"]
    return ids[:limit] if limit else ids


@torch.inference_mode()
def _logits(model: torch.nn.Module, window: torch.Tensor) -> torch.Tensor:
    return model(input_ids=window, use_cache=False).logits[0].float()  # (T, V)


@torch.inference_mode()
def measure_quality(reference, models: dict, ids: list[int], window: int = 512) -> dict[str, Quality]:
    """Quality of each model in `models` (name -> model) against `reference`, over `ids` in windows."""
    if window < 2 or len(ids) < 2:
        raise ValueError(f"need a window of at least 2 tokens and a text of at least 2; got {window} and {len(ids)}")
    device = next(reference.parameters()).device
    sums = {name: [0.0, 0.0, 0] for name in models}  # nll, kl, agreements
    positions = 0
    for start in range(0, len(ids) - 1, window):
        chunk = torch.tensor([ids[start : start + window + 1]], device=device)  # (1, T + 1)
        inputs, targets = chunk[:, :-1], chunk[0, 1:]  # (1, T), (T,)
        ref = _logits(reference, inputs)  # (T, V)
        log_p_ref = log_probs(ref)  # once per window, for every model compared with it
        positions += targets.numel()
        for name, model in models.items():
            logits = ref if model is reference else _logits(model, inputs)
            log_p = log_p_ref if model is reference else log_probs(logits)
            sums[name][0] += float(-log_p.gather(-1, targets[:, None]).sum())  # the text's negative log-likelihood
            sums[name][1] += float(kl_of_log_probs(log_p_ref, log_p).sum())
            sums[name][2] += int(same_top1(ref, logits).sum())
    return {
        name: Quality(math.exp(nll / positions), kl / positions, agree / positions, positions)
        for name, (nll, kl, agree) in sums.items()
    }
