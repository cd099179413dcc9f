"""Beam search, one step at a time, with the whole candidate pool recorded.

Greedy keeps one sequence and takes the most probable next token; that is only locally optimal. Beam
search keeps `num_beams` sequences. At every step each live beam is extended by every token, each
extension is scored by its cumulative log-probability, and the best survive. A sequence that ends (the
end-of-sequence token, or the length limit) is set aside as a finished hypothesis, scored with a length
penalty: transformers divides the summed log-probability by the generated length ** length_penalty
(vLLM divides by the whole length, prompt included). The answer is the best finished hypothesis.

This follows transformers' `_beam_search` (generation/utils.py) operation for operation, so the best
sequence equals `model.generate(num_beams=k, do_sample=False, ...)`:
1) prefill the prompt once per beam; only beam 0 starts live (the others score -1e9);
2) add each beam's next-token log-probs to its score and take the top 2*k (k*(1+#EOS)) of all k*V;
3) the best k of those that did not just end become the live beams; the KV cache follows them;
4) those among the first k that ended join the finished set if they beat its worst member;
5) stop when no live beam can beat the finished set (early_stopping), or every candidate has ended.
One beam is greedy, as generate() runs it for num_beams=1: the first sequence to end is the answer.
Paper: Freitag & Al-Onaizan, "Beam Search Strategies for Neural Machine Translation", arXiv:1702.01806.
"""

import math
from dataclasses import dataclass

import torch

from decoding.beams.records import BeamCandidate, BeamResult, BeamStep, Hypothesis
from decoding.forward import forward
from decoding.loop import MAX_NEW_TOKENS_CAP
from decoding.models import LoadedModel
from decoding.prompts import token_texts

MAX_BEAMS = 16
EARLY_STOPPING = (True, False, "never")
NEG = -1.0e9  # transformers' "impossible" score
EXTRA_PER_BEAM = 2  # each live beam's best tokens outside the pool, shown as pruned


def check_settings(num_beams, length_penalty, early_stopping, max_new_tokens) -> None:
    def whole(x) -> bool:
        return isinstance(x, int) and not isinstance(x, bool)

    if not (whole(num_beams) and 1 <= num_beams <= MAX_BEAMS):
        raise ValueError(f"num_beams must be an integer in [1, {MAX_BEAMS}], got {num_beams!r}")
    number = isinstance(length_penalty, (int, float)) and not isinstance(length_penalty, bool)
    if not (number and math.isfinite(length_penalty) and -5 <= length_penalty <= 5):
        raise ValueError(f"length_penalty must be a number in [-5, 5] (1.0 = divide by length), got {length_penalty!r}")
    if early_stopping not in EARLY_STOPPING or not isinstance(early_stopping, (bool, str)):
        raise ValueError(f"early_stopping must be True, False or 'never', got {early_stopping!r}")
    if not (whole(max_new_tokens) and 1 <= max_new_tokens <= MAX_NEW_TOKENS_CAP):
        raise ValueError(f"max_new_tokens must be an integer in [1, {MAX_NEW_TOKENS_CAP}], got {max_new_tokens!r}")


def beam_steps(lm: LoadedModel, prompt_ids, num_beams=4, length_penalty=1.0, early_stopping=False, max_new_tokens=32):
    """The search as a generator of BeamStep records; returns the BeamResult when it stops."""
    check_settings(num_beams, length_penalty, early_stopping, max_new_tokens)
    prompt_ids = _checked_prompt(lm, prompt_ids, max_new_tokens)
    k, eos, dev = num_beams, set(lm.eos_ids), lm.device
    # one beam is greedy (what generate() runs for num_beams=1): the first sequence to end is the answer
    stop_when_full = early_stopping is True or k == 1
    pool_size = max(2, 1 + len(eos)) * k  # enough candidates that k can continue even if k of them end
    result = BeamResult(
        prompt_ids=prompt_ids,
        num_beams=k,
        length_penalty=float(length_penalty),
        early_stopping=early_stopping,
        max_new_tokens=max_new_tokens,
    )

    # 1) prefill: the prompt once per beam; only beam 0 is live at first
    logits, cache = forward(lm, torch.tensor([prompt_ids] * k, device=dev), None, 0)  # (k, V)
    state = _State.start(k, dev)
    for step in range(max_new_tokens):
        live = state.live()
        # 2) every live beam times every token, scored by cumulative log-prob
        pool = _expand(logits, state, pool_size, eos, ends=step + 1 >= max_new_tokens)
        # 3) the best k candidates that did not end keep running
        run_scores = pool.scores + pool.hits.to(torch.float32) * NEG  # (1, pool)
        next_idx = torch.topk(run_scores, k=k)[1][0].tolist()  # (k,)
        # 4) candidates among the first k that ended compete for the finished set
        new = _finish(state, pool, step, length_penalty, stop_when_full)
        record = _record(lm, step, live, state, pool, next_idx, new)
        state.running = [list(pool.ids[i]) for i in next_idx]
        state.running_scores = run_scores[:, next_idx]
        # 5) stop, or reorder the cache to follow the surviving beams and decode their new tokens
        state.improvable = state.improvable and _improvable(
            state, step + 1, max_new_tokens, length_penalty, early_stopping
        )
        all_full = bool(state.finished_flags.all()) and stop_when_full
        all_hit = bool(pool.hits.all())
        record.last = not state.improvable or all_full or all_hit
        result.stop_reason = _stop_reason(state.improvable, all_full, all_hit, step + 1 >= max_new_tokens)
        yield record
        if record.last:
            break
        cache.reorder_cache(torch.tensor([pool.parents[i] for i in next_idx], device=dev))
        last = torch.tensor([[ids[-1]] for ids in state.running], device=dev)  # (k, 1)
        logits, cache = forward(lm, last, cache, len(prompt_ids) + step)

    result.best = state.finished[0]
    result.text = lm.tokenizer.decode(result.best.token_ids, skip_special_tokens=True)
    return result


def _checked_prompt(lm: LoadedModel, prompt_ids, max_new_tokens: int) -> list[int]:
    prompt_ids = [int(i) for i in prompt_ids]
    if not prompt_ids:
        raise ValueError("the prompt is empty: beam search needs at least one token to start from")
    if len(prompt_ids) + max_new_tokens > lm.context_length:
        raise ValueError(f"prompt + max_new_tokens exceeds the context window of {lm.context_length} tokens")
    return prompt_ids


@dataclass
class _State:
    """The search between steps, as transformers keeps it: k live slots and k finished slots."""

    running: list[list[int]]  # generated ids per live slot
    running_scores: torch.Tensor  # (1, k) cumulative log-prob; NEG for an empty slot
    finished: list[Hypothesis | None]  # per finished slot
    finished_scores: torch.Tensor  # (1, k) length-penalised
    finished_flags: torch.Tensor  # (1, k) bool: the slot holds a hypothesis
    improvable: bool = True  # can a live beam still beat the finished set?

    @classmethod
    def start(cls, k: int, dev) -> "_State":
        running_scores = torch.zeros(1, k, device=dev)  # (1, k)
        running_scores[:, 1:] = NEG
        finished_scores = torch.full((1, k), NEG, device=dev)  # (1, k)
        flags = torch.zeros(1, k, dtype=torch.bool, device=dev)  # (1, k)
        return cls([[] for _ in range(k)], running_scores, [None] * k, finished_scores, flags)

    def live(self) -> list[tuple[list[int], float]]:
        scores = self.running_scores[0].tolist()
        return [(list(ids), s) for ids, s in zip(self.running, scores) if s > NEG / 2]


@dataclass
class _Pool:
    """One step's best 2*k extensions of the live beams, ranked."""

    logp: torch.Tensor  # (k, V) each live beam's next-token log-probs
    scores: torch.Tensor  # (1, pool) cumulative log-prob of each candidate
    parents: list[int]  # the live slot each extends
    tokens: list[int]
    ids: list[list[int]]  # each candidate's generated ids
    hits: torch.Tensor  # (1, pool) bool: it ended (an end-of-sequence token, or the length limit)


def _expand(logits: torch.Tensor, state: _State, pool_size: int, eos: set[int], ends: bool) -> _Pool:
    logp = torch.log_softmax(logits, dim=-1)  # (k, V)
    vocab = logp.shape[-1]
    total = (logp + state.running_scores[0, :, None]).reshape(1, -1)  # (1, k*V)
    scores, top_idx = torch.topk(total, k=pool_size)  # (1, pool)
    parents, tokens = (top_idx // vocab)[0].tolist(), (top_idx % vocab)[0].tolist()
    ids = [state.running[p] + [t] for p, t in zip(parents, tokens)]
    hits = torch.tensor([[t in eos or ends for t in tokens]], device=logits.device)  # (1, pool)
    return _Pool(logp, scores, parents, tokens, ids, hits)


def _finish(state: _State, pool: _Pool, step: int, length_penalty: float, stop_when_full: bool) -> set[int]:
    """Merge the candidates that just ended (among the first k) into the finished set; returns their ranks."""
    k = len(state.finished)
    fin = pool.scores / ((step + 1) ** length_penalty)  # (1, pool)
    fin += (state.finished_flags.all() & stop_when_full).to(torch.float32) * NEG
    fin += float(not state.improvable) * NEG
    just_finished = pool.hits & (torch.arange(pool.scores.shape[1], device=fin.device) < k)[None, :]  # (1, pool)
    fin += (~just_finished) * NEG
    merged = torch.cat((state.finished_scores, fin), dim=1)  # (1, k + pool)
    keep = torch.topk(merged, k=k)[1][0].tolist()  # (k,)
    merged_flags = torch.cat((state.finished_flags, just_finished), dim=1)  # (1, k + pool)
    new = {i - k for i in keep if i >= k and bool(merged_flags[0, i])}
    state.finished = [
        state.finished[i] if i < k else Hypothesis(pool.ids[i - k], float(pool.scores[0, i - k]), 0.0, step)
        for i in keep
    ]
    state.finished_scores = merged[:, keep]
    state.finished_flags = merged_flags[:, keep]
    for h, s in zip(state.finished, state.finished_scores[0].tolist()):
        if h is not None:
            h.score = s
    return new


def _stop_reason(improvable: bool, all_full: bool, all_hit: bool, at_limit: bool) -> str:
    if at_limit:
        return "max_new_tokens"
    if all_full:
        return "all_finished"
    if not improvable:
        return "cannot_improve"
    return "no_continuation" if all_hit else ""


def _improvable(state: _State, gen_len, max_new_tokens, length_penalty, early_stopping) -> bool:
    """transformers' heuristic: can the best live beam still beat the worst finished hypothesis?
    early_stopping=False assumes the live beam's score at today's length; "never" (with a positive
    penalty) assumes it could reach max length."""
    length = max_new_tokens if early_stopping == "never" and length_penalty > 0.0 else gen_len
    best_possible = state.running_scores[:, :1] / (length**length_penalty)  # (1, 1)
    worst = torch.where(state.finished_flags, torch.min(state.finished_scores, dim=1, keepdim=True)[0], NEG)  # (1, k)
    return bool(torch.any(best_possible > worst))


def _record(lm, step: int, live, state: _State, pool: _Pool, next_idx: list[int], new: set[int]) -> BeamStep:
    """The step as plain data: the pool with each candidate's fate, plus each beam's best outsiders.
    `state` still holds the beams this step extended, and already the finished set after it."""
    cands = []
    for rank, (p, t, s) in enumerate(zip(pool.parents, pool.tokens, pool.scores[0].tolist())):
        slot = next_idx.index(rank) if rank in next_idx and not bool(pool.hits[0, rank]) else -1
        fate = "running" if slot >= 0 else "finished" if rank in new else "pruned"
        cands.append(
            BeamCandidate(
                parent=p,
                token_id=t,
                token_text="",
                logprob=float(pool.logp[p, t]),
                score=s,
                rank=rank,
                fate=fate,
                next_slot=slot,
            )
        )
    seen = set(zip(pool.parents, pool.tokens))
    for p in range(len(state.running)):
        if state.running_scores[0, p] <= NEG / 2:
            continue
        best = torch.topk(pool.logp[p], k=len(seen) + EXTRA_PER_BEAM)[1].tolist()
        outside = [t for t in best if (p, t) not in seen][:EXTRA_PER_BEAM]
        for t in outside:
            lp = float(pool.logp[p, t])
            score = float(state.running_scores[0, p]) + lp
            cands.append(
                BeamCandidate(parent=p, token_id=t, token_text="", logprob=lp, score=score, rank=-1, fate="pruned")
            )
    for c, text in zip(cands, token_texts(lm.tokenizer, [c.token_id for c in cands])):
        c.token_text = text
    finished = [h for h, f in zip(state.finished, state.finished_flags[0].tolist()) if f and h is not None]
    return BeamStep(step, live, cands, finished)


def beam_search(lm, prompt_ids, num_beams=4, length_penalty=1.0, early_stopping=False, max_new_tokens=32):
    """Run `beam_steps` to the end and return the BeamResult (steps included)."""
    gen = beam_steps(lm, prompt_ids, num_beams, length_penalty, early_stopping, max_new_tokens)
    steps = []
    while True:
        try:
            steps.append(next(gen))
        except StopIteration as stop:
            stop.value.steps = steps
            return stop.value
