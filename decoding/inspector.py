"""The step tab's inspectors, read off the pending distribution before a token is chosen: which logits the
penalties moved, whether the engines' stage orders (`sandbox.compare_orders`) keep different sets, and each
strategy alone on it (`sandbox.each_strategy_alone`). They read the run's one processed distribution
(`Run.preview`, computed once per distribution and settings, which the step then chooses from) rather than run
the pipeline again. Small plain data out, token texts included (this is an edge of the loop, where text appears).

Both are pure functions of the logits, the settings and the context's ids: a class that presses one preset gets the
same logits in every session (the prefix cache answers them bit for bit), so the last few results are kept
(`decoding.recent`) and a session whose inputs are exactly a kept one's reads it instead of computing it again.
Each strategy alone is vocabulary-sized work (softmaxes and masks over every logit, a full sort for top-p)."""

from dataclasses import dataclass

import torch

from decoding.loop import Run
from decoding.pipeline import PENALTIES, Processed, SamplerSettings, process
from decoding.prompts import token_texts
from decoding.recent import Recent
from decoding.sandbox import Alone, compare_orders, each_strategy_alone
from decoding.stages import GRAMMAR

MAX_MOVED = 10
MAX_DIFFERING = 8
KEPT = 8  # results of each inspector kept for other sessions (each holds its logits: V floats)


@dataclass(frozen=True)
class Moved:
    """A token whose logit a penalty changed."""

    id: int
    text: str
    before: float  # the model's logit
    after: float  # after every penalty stage


@dataclass(frozen=True)
class Inspection:
    moved: list[Moved]  # the most likely few tokens the penalties moved
    penalties_on: bool
    kept_by_order: dict[str, int]  # engine order -> tokens it keeps
    differing: list[tuple[str, tuple[str, ...]]]  # (token text, the orders that keep it) where orders disagree


def inspect_step(run: Run, settings: SamplerSettings) -> Inspection:
    """What the penalties did to the pending logits, and what each engine order keeps of them (read from the kept
    results when another session inspected exactly these logits, settings and context)."""
    p = run.preview(settings)
    # a grammar's mask is the run's own state: a constrained run's inspection is never shared
    inputs = (run.lm.model_id, settings, tuple(run.ids), len(run.prompt.ids)) if GRAMMAR not in p.stages else None
    found = _INSPECTED.get(run.logits, inputs) if inputs is not None else None
    if found is None:
        found = _inspect(run, p, settings)
        if inputs is not None:
            _INSPECTED.put(run.logits, inputs, found)
    return found


def _inspect(run: Run, p: Processed, settings: SamplerSettings) -> Inspection:
    """`inspect_step` computed, from `p`: the distribution the step chooses from, processed once."""
    on = any(settings.enabled(n) for n in PENALTIES)
    moved = _moved(run, p, settings) if on else []
    known = p if GRAMMAR not in p.stages else None  # the orders compare the model's logits, without a grammar
    comparison = compare_orders(run.logits, settings, run.ids, run.generated, max_rows=MAX_DIFFERING, known=known)
    texts = token_texts(run.lm.tokenizer, [i for i, _, _ in comparison.differing])
    differing = [(t, keepers) for t, (_, _, keepers) in zip(texts, comparison.differing)]
    return Inspection(moved, on, {o.order: o.kept for o in comparison.orders}, differing)


def strategies_alone(run: Run, settings: SamplerSettings, top_n: int) -> tuple[list[Alone], dict[int, str]]:
    """Each strategy alone on the pending logits (`sandbox.each_strategy_alone`), with the texts of its top tokens;
    the model's probabilities come from the run's processed distribution."""
    p = run.preview(settings)
    results = _ALONE.get(p.raw, (settings, top_n))
    if results is None:
        results = each_strategy_alone(p.raw, settings, top_n, probs=p.probs_before)
        _ALONE.put(p.raw, (settings, top_n), results)
    ids = results[0].ids
    return results, dict(zip(ids, token_texts(run.lm.tokenizer, ids)))


_ALONE, _INSPECTED = Recent(KEPT), Recent(KEPT)


def _moved(run: Run, p: Processed, settings: SamplerSettings) -> list[Moved]:
    if GRAMMAR in p.stages:  # the penalties' own pass, as the grammar's engine would run it
        penalties = SamplerSettings(
            repetition_penalty=settings.repetition_penalty,
            presence_penalty=settings.presence_penalty,
            frequency_penalty=settings.frequency_penalty,
        )
        alone = process(run.logits, penalties, run.ids, run.generated, grammar=run.legal_mask())
        raw, after = alone.raw, alone.final
    else:  # every order runs the penalties first: what they left is in the one processed distribution
        raw, after = p.raw, p.penalized
    changed = torch.nonzero(after != raw).flatten()  # (M,)
    ids = changed[torch.argsort(raw[changed], descending=True)][:MAX_MOVED].tolist()
    texts = token_texts(run.lm.tokenizer, ids)
    return [Moved(i, t, float(raw[i]), float(after[i])) for i, t in zip(ids, texts)]
