"""How much the timing lab measures (the plans), and the ordinary prose its prompts are made of."""

from dataclasses import dataclass

import torch

from decoding.models import LoadedModel

FILLER = (
    "The river carried the boats past the old mill, where the miller counted sacks of grain and "
    "wrote each number twice, once in the ledger and once on the wall, so nobody could argue later. "
)


@dataclass(frozen=True)
class Plan:
    """How much to measure. `quick` fits in about a minute on two CPU cores with the bundled model."""

    name: str
    prefill_lengths: tuple[int, ...] = (16, 64, 256, 1024)
    repeats: int = 3
    warmup: int = 1
    decode_steps: int = 5  # timed decode steps at each context length
    naive_prompt: int = 16
    naive_tokens: int = 32
    batches: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    batch_context: int = 32
    request_prompt: int = 128
    request_tokens: int = 32


PLANS = {
    "quick": Plan("quick"),
    "thorough": Plan(
        "thorough",
        prefill_lengths=(8, 16, 32, 64, 128, 256, 512, 1024),
        repeats=5,
        warmup=2,
        decode_steps=10,
        naive_prompt=32,
        naive_tokens=64,
        request_prompt=500,
        request_tokens=200,
    ),
    "gpu": Plan(
        "gpu",
        prefill_lengths=(16, 64, 128, 256, 512, 1024),
        repeats=10,
        warmup=3,
        decode_steps=20,
        naive_prompt=64,
        naive_tokens=128,
        request_prompt=500,
        request_tokens=200,
    ),
}


def default_plan(device: torch.device) -> Plan:
    return PLANS["gpu"] if device.type == "cuda" else PLANS["quick"]


def filler_ids(lm: LoadedModel, n: int) -> list[int]:
    """`n` token ids of ordinary prose (repeated as needed), so attention sees real text."""
    if not (isinstance(n, int) and 1 <= n < lm.context_length):
        raise ValueError(f"length must be an integer in [1, {lm.context_length - 1}] for this model, got {n!r}")
    base = lm.tokenizer(FILLER, add_special_tokens=False).input_ids
    return (base * (n // len(base) + 1))[:n]
