"""Choosing a token under a grammar, as each engine does it (the orders are data in decoding.pipeline).

transformers and vLLM apply the grammar before any truncation, so top-k, top-p and min-p only ever cut among legal
tokens and something legal always survives. llama.cpp runs its chain first and checks only the token it drew: fast
when the model already wanted a legal token, and when it did not (a truncation can leave nothing legal: top-k 1 on
an illegal favourite) it recovers by running the whole thing again with the grammar first, a second draw.
"""

from dataclasses import dataclass, replace

from decoding.pipeline import GRAMMAR_ORDERS, Processed, SamplerSettings, process, select
from decoding.stages import GRAMMAR

RECOVERY = {
    "transformers": "none needed: truncations only see legal tokens",
    "vllm": "none needed: truncations only see legal tokens",
    "llama.cpp": "an illegal draw is thrown away; the step is redone with the grammar first",
}


@dataclass(frozen=True)
class Choice:
    processed: Processed  # what the recorded step shows: the stages that produced the token
    token: int
    resampled_from: int | None = None  # llama.cpp: the illegal token drawn first


def choose(logits, settings: SamplerSettings, all_ids, generated_ids, keep, generator) -> Choice:
    """One token under the grammar `keep` ((V,) bool), in the order and with the recovery of `settings.order`."""
    if GRAMMAR_ORDERS[settings.order][-1] != GRAMMAR:
        p = process(logits, settings, all_ids, generated_ids, grammar=keep)
        return Choice(p, select(p.final, settings, generator))
    # llama.cpp: draw from the chain alone, then check that one token
    drawn = select(process(logits, settings, all_ids, generated_ids).final, settings, generator)
    if keep[drawn]:
        return Choice(process(logits, settings, all_ids, generated_ids, grammar=keep), drawn)
    # illegal: the same chain again with the grammar first, and a second draw (pipeline.GRAMMAR_RESAMPLE_ORDERS)
    p = process(logits, settings, all_ids, generated_ids, grammar=keep, resample=True)
    return Choice(p, select(p.final, settings, generator), resampled_from=drawn)


def survivors_without_grammar(logits, settings: SamplerSettings, all_ids, generated_ids, keep) -> tuple[int, int]:
    """(tokens the truncations keep, how many of those are legal): 0 legal is the case where the order matters."""
    p = process(logits, settings, all_ids, generated_ids)
    survived = p.removed_by == -1  # (V,)
    return int(survived.sum()), int((survived & keep).sum())


@dataclass(frozen=True)
class Outcome:
    """What one engine does with the pending distribution under the grammar."""

    engine: str
    order: tuple[str, ...]  # its stages, the grammar among them
    enabled: tuple[str, ...]  # those that do something with these settings
    truncated: int  # tokens the samplers alone keep (before any grammar)
    legal_left: int  # how many of those are legal: 0 is where running the grammar last fails
    recovery: str


def outcomes(logits, settings: SamplerSettings, all_ids, generated_ids, keep) -> list[Outcome]:
    """Every engine's order on the same logits and grammar, with the same knobs."""
    result = []
    for engine, order in GRAMMAR_ORDERS.items():
        s = replace(settings, order=engine)
        enabled = tuple(name for name in order if name == GRAMMAR or s.enabled(name))
        kept, legal = survivors_without_grammar(logits, s, all_ids, generated_ids, keep)
        result.append(
            Outcome(
                engine=engine, order=order, enabled=enabled, truncated=kept, legal_left=legal, recovery=RECOVERY[engine]
            )
        )
    return result
