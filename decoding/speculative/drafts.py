"""Where the K guesses come from: two drafts that cost far less than the model itself.

1) Prompt lookup (no second model): take the last n tokens of the context (n = 2, else 1), find their first
   earlier occurrence, and propose the K tokens that followed it. Free to compute, and right whenever the answer
   copies its context: an edit, a quote, code being rewritten. Its proposal is certain (q is one-hot).
2) Early exit (self-speculative): the same model cut after its first L layers, then its own final norm and LM
   head. Each guess costs a forward pass of L layers, and a model not trained to exit early guesses poorly.

Both follow transformers' PromptLookupCandidateGenerator and EarlyExitCandidateGenerator, so the drafts are
the ones `generate(prompt_lookup_num_tokens=K)` and `generate(assistant_early_exit=L)` try.
"""

import contextlib
from dataclasses import dataclass, field

import torch

from decoding.clock import Timer
from decoding.forward import forward_one, rewind
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings, process, select
from decoding.speculative.records import Match

MAX_NGRAM = 2  # transformers' default max_matching_ngram_size


@dataclass
class Proposal:
    """K drafted tokens; `q` the draft's distribution at each (after the sampler pipeline), None when certain."""

    tokens: list[int]
    q: list[torch.Tensor] | None = None  # K tensors (V,)
    match: Match | None = None
    passes: int = 0
    ms: float = 0.0
    pass_ms: list[float] = field(default_factory=list)


def lookup(ids: list[int], k: int, eos_ids=(), max_ngram: int = MAX_NGRAM) -> Proposal:
    """Prompt lookup: the longest n-gram (n <= max_ngram) ending the context, matched at its first earlier
    occurrence that has a continuation; up to `k` following tokens, cut before an end-of-sequence token (or the
    target could accept it and go on writing past the end)."""
    n = len(ids)
    for size in range(min(max_ngram, n - 1), 0, -1):
        tail = ids[n - size :]
        for start in range(n - size + 1):
            follow = start + size
            if ids[start:follow] != tail or follow >= n:
                continue
            chosen = ids[follow : min(follow + k, n)]
            cut = next((i for i, t in enumerate(chosen) if t in eos_ids), len(chosen))
            # transformers keeps the first match even when the end-of-sequence cut leaves nothing to propose
            return Proposal(chosen[:cut], match=Match(start, size, follow) if cut else None)
    return Proposal([])


@contextlib.contextmanager
def first_layers(lm: LoadedModel, layers: int):
    """The model cut after `layers` decoder layers (then its final norm and LM head), as transformers' early exit
    does it: the decoder runs `layers[: config.num_hidden_layers]`. This changes the shared model for the block,
    so call it only while holding the model's turn (one forward pass at a time on the server)."""
    base = getattr(lm.model, lm.model.base_model_prefix)
    full = base.config.num_hidden_layers
    base.config.num_hidden_layers = layers
    try:
        yield
    finally:
        base.config.num_hidden_layers = full


class EarlyExit:
    """The first `layers` layers as a draft, with their own KV cache (transformers keeps one for the assistant)."""

    def __init__(self, lm: LoadedModel, layers: int):
        self.lm, self.layers = lm, layers
        self.cache, self.cached = None, []  # the draft's KV cache and the ids it holds

    def prefill(self, ids: list[int]) -> None:
        with first_layers(self.lm, self.layers):
            _, self.cache = forward_one(self.lm, ids, None, 0)
        self.cached = list(ids)

    def propose(self, ids: list[int], k: int, settings: SamplerSettings, generator, prompt_len: int) -> Proposal:
        """K tokens, one pass of the cut model each, each drawn (argmax at temperature 0) from its distribution
        after the same sampler pipeline the target uses; stops early at an end-of-sequence token."""
        out = Proposal([], q=[])
        with Timer(self.lm.device) as total, first_layers(self.lm, self.layers):
            # keep what the cache holds of the context (a rejected guess is dropped), read the rest in one pass
            keep = _common_prefix(self.cached, ids[:-1])
            if self.cache is not None:
                rewind(self.cache, keep)
            context, feed = list(ids), ids[keep:]
            for _ in range(k):
                with Timer(self.lm.device) as t:
                    logits, self.cache = forward_one(self.lm, feed, self.cache, len(context) - len(feed))
                out.pass_ms.append(t.ms)
                self.cached = list(context)
                processed = process(logits, settings, context, context[prompt_len:])
                token = select(processed.final, settings, generator)
                out.tokens.append(token)
                out.q.append(processed.probs_after)
                context.append(token)
                feed = [token]
                if token in self.lm.eos_ids:
                    break
        out.passes, out.ms = len(out.pass_ms), total.ms
        return out


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def layer_count(lm: LoadedModel) -> int:
    """The model's decoder layers, counted from the layers themselves: `config.num_hidden_layers` reads L while
    another session's early-exit draft runs."""
    return len(getattr(lm.model, lm.model.base_model_prefix).layers)


def check_exit_layer(lm: LoadedModel, layers) -> int:
    total = layer_count(lm)
    if not (isinstance(layers, int) and not isinstance(layers, bool) and 1 <= layers <= total - 1):
        raise ValueError(
            f"exit layer L must be a whole number in [1, {total - 1}] (the model has {total} layers, and the draft "
            f"must stop before the last), got {layers!r}"
        )
    return layers
