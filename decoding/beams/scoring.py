"""A sequence's log-probability, token by token: how greedy and beam search are put side by side.

Greedy picks the most probable token at each step; the sum of those log-probabilities is not always the
most probable sequence. Scoring both continuations with one forward pass each shows by how much.
"""

import copy
from dataclasses import dataclass

import torch

from decoding.forward import forward_positions
from decoding.loop import Prefilled, Run, drive
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings
from decoding.prompts import Prompt, token_texts


@dataclass
class Scored:
    token_ids: list[int]
    text: str
    token_texts: list[str]
    logprobs: list[float]  # each token's log-probability given everything before it

    @property
    def logprob(self) -> float:
        return float(sum(self.logprobs))


@torch.inference_mode()
def score_sequence(lm: LoadedModel, prompt_ids, token_ids) -> Scored:
    """Each generated token's log-probability, from one forward pass over prompt + tokens."""
    prompt_ids, token_ids = [int(i) for i in prompt_ids], [int(i) for i in token_ids]
    ids = torch.tensor([prompt_ids + token_ids], device=lm.device)  # (1, P + T)
    logits, _ = forward_positions(lm, ids, None, 0, ids.shape[1])  # (1, P + T, V)
    return _scored(lm, token_ids, logits[0, len(prompt_ids) - 1 : -1])


@torch.inference_mode()
def score_after(lm: LoadedModel, prefilled: Prefilled, token_ids) -> Scored:
    """`score_sequence` for tokens after a prompt whose pass has run (`decoding.loop.prefill_once`): the first
    token's log-probability from the logits after the prompt, the others' from one pass over the tokens but the last,
    against a copy of the prompt's cache. The same maths as one pass over prompt + tokens, in another order: rounding
    apart (a test holds them within 1e-4), and the prompt is not computed again for every answer scored."""
    token_ids = [int(i) for i in token_ids]
    rows = prefilled.logits.to(torch.float32)[None]  # (1, V): the distribution of the first token
    if len(token_ids) > 1:
        past = len(prefilled.ids)
        ids = torch.tensor([token_ids[:-1]], device=lm.device)  # (1, T - 1)
        logits, _ = forward_positions(lm, ids, copy.deepcopy(prefilled.cache), past, ids.shape[1])  # (1, T - 1, V)
        rows = torch.cat([rows, logits[0]])  # (T, V)
    return _scored(lm, token_ids, rows[: len(token_ids)])  # no tokens: no rows


def _scored(lm: LoadedModel, token_ids: list[int], logits: torch.Tensor) -> Scored:
    """The tokens scored from the logits that predicted each of them: (T, V) float32, row i before token i."""
    logp = torch.log_softmax(logits, dim=-1)  # (T, V)
    chosen = logp[torch.arange(len(token_ids)), torch.tensor(token_ids, dtype=torch.long)].tolist()  # (T,)
    text = lm.tokenizer.decode(token_ids, skip_special_tokens=True)
    return Scored(token_ids, text, token_texts(lm.tokenizer, token_ids), chosen)


def greedy_sequence(lm: LoadedModel, prompt_ids, max_new_tokens=32, check=None) -> Scored:
    """The greedy continuation (the engine's loop at temperature 0), scored for comparison with a beam. `check()`, if
    given, runs between two of its steps (a `decoding.watch.Watch`'s: it raises to stop the work)."""
    prompt_ids = [int(i) for i in prompt_ids]
    prompt = Prompt(lm.tokenizer.decode(prompt_ids), prompt_ids, token_texts(lm.tokenizer, prompt_ids))
    run = Run(lm, prompt, max_new_tokens=max_new_tokens, top_n=1)
    run.prefill()
    for _ in drive(run, SamplerSettings(temperature=0.0)):
        if check is not None:
            check()
    return score_sequence(lm, prompt_ids, run.trace.token_ids)
