"""The verify pass: the target reads the last accepted token and the K drafted tokens in ONE forward pass, and
returns a distribution at each of the K + 1 positions.

Decode is memory-bound: a pass over 1 token and a pass over K + 1 tokens both read every weight once, so on a
machine where reading the weights sets the pace the K + 1 positions cost little more than one. Afterwards the
KV cache holds all K + 1 positions; the rejected guesses are cropped off again (decoding.forward.rewind).
"""

import torch

from decoding.forward import forward_positions
from decoding.models import LoadedModel


@torch.inference_mode()
def verify(lm: LoadedModel, fed: list[int], cache, past: int):
    """`fed` (T = K + 1 ids) at positions past .. past + T - 1 -> float32 logits at every position (T, V) and the
    grown cache. Not a scheduler work item: the scheduler's forward keeps only the last position's logits, so this
    pass runs in a model turn of its own (ui.context.model_turn), between the scheduler's ticks."""
    ids = torch.tensor([fed], device=lm.device)  # (1, T)
    logits, cache = forward_positions(lm, ids, cache, past, len(fed))  # (1, T, V)
    return logits[0], cache  # (T, V)
