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
from dataclasses import asdict, dataclass, field

import torch

from decoding.loop import MAX_NEW_TOKENS_CAP, forward
from decoding.models import LoadedModel
from decoding.prompts import token_texts

MAX_BEAMS = 16
EARLY_STOPPING = (True, False, "never")
NEG = -1.0e9  # transformers' "impossible" score
EXTRA_PER_BEAM = 2  # each live beam's best tokens outside the pool, shown as pruned


@dataclass
class BeamCandidate:
    parent: int  # slot of the live beam it extends
    token_id: int
    token_text: str
    logprob: float  # of this token after its beam
    score: float  # cumulative log-prob of the beam plus this token
    rank: int  # place in the pool of 2*k ranked candidates (0 = best); -1 = outside the pool
    fate: str  # "running" (a live beam next step), "finished" (a hypothesis), or "pruned"
    next_slot: int = -1  # its slot among next step's live beams, when running


@dataclass
class Hypothesis:
    token_ids: list[int]  # generated ids, the end-of-sequence token included
    logprob: float  # summed log-probability
    score: float  # logprob / len(token_ids) ** length_penalty
    step: int  # the step it finished at


@dataclass
class BeamStep:
    index: int
    beams: list[tuple[list[int], float]]  # the live beams this step expanded: (generated ids, cumulative log-prob)
    candidates: list[BeamCandidate]
    finished: list[Hypothesis]  # the finished set after this step, best first
    last: bool = False  # the search stops after this step


@dataclass
class BeamResult:
    prompt_ids: list[int]
    num_beams: int
    length_penalty: float
    early_stopping: bool | str
    max_new_tokens: int
    steps: list[BeamStep] = field(default_factory=list)
    best: Hypothesis | None = None
    text: str = ""
    stop_reason: str = ""  # max_new_tokens, all_finished (early_stopping=True), cannot_improve, no_continuation

    @property
    def token_ids(self) -> list[int]:
        return list(self.best.token_ids) if self.best else []

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(token_ids=self.token_ids, score=self.best.score if self.best else None)
        d["logprob"] = self.best.logprob if self.best else None
        return d


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
    prompt_ids = [int(i) for i in prompt_ids]
    if not prompt_ids:
        raise ValueError("the prompt is empty: beam search needs at least one token to start from")
    if len(prompt_ids) + max_new_tokens > lm.context_length:
        raise ValueError(f"prompt + max_new_tokens exceeds the context window of {lm.context_length} tokens")
    k, eos = num_beams, set(lm.eos_ids)
    # one beam is greedy (what generate() runs for num_beams=1): the first sequence to end is the answer
    stop_when_full = early_stopping is True or k == 1
    pool = max(2, 1 + len(eos)) * k  # enough candidates that k can continue even if k of them end
    prompt_len, dev = len(prompt_ids), lm.device
    result = BeamResult(prompt_ids, k, float(length_penalty), early_stopping, max_new_tokens)

    # 1) prefill: the prompt once per beam; only beam 0 is live at first
    logits, cache = forward(lm, torch.tensor([prompt_ids] * k, device=dev), None, 0)  # (k, V)
    running = [[] for _ in range(k)]  # generated ids per live slot
    running_scores = torch.zeros(1, k, device=dev)  # (1, k)
    running_scores[:, 1:] = NEG
    finished = [None] * k  # Hypothesis per finished slot
    finished_scores = torch.full((1, k), NEG, device=dev)  # (1, k)
    finished_flags = torch.zeros(1, k, dtype=torch.bool, device=dev)  # (1, k)
    improvable = True
    top_mask = torch.arange(pool, device=dev) < k  # (pool,): only the first k may finish

    for step in range(max_new_tokens):
        live = [(list(running[j]), float(running_scores[0, j])) for j in range(k) if running_scores[0, j] > NEG / 2]
        # 2) every live beam times every token, scored by cumulative log-prob
        logp = torch.log_softmax(logits, dim=-1)  # (k, V)
        vocab = logp.shape[-1]
        total = (logp + running_scores[0, :, None]).reshape(1, -1)  # (1, k*V)
        top_scores, top_idx = torch.topk(total, k=pool)  # (1, pool)
        parents, tokens = (top_idx // vocab)[0].tolist(), (top_idx % vocab)[0].tolist()
        cand_ids = [running[p] + [t] for p, t in zip(parents, tokens)]
        ends = step + 1 >= max_new_tokens
        hits = torch.tensor([[t in eos or ends for t in tokens]], device=dev)  # (1, pool)

        # 3) the best k candidates that did not end keep running
        run_scores = top_scores + hits.to(torch.float32) * NEG  # (1, pool)
        next_idx = torch.topk(run_scores, k=k)[1][0].tolist()  # (k,)

        # 4) candidates among the first k that ended compete for the finished set
        fin = top_scores / ((step + 1) ** length_penalty)  # (1, pool)
        fin += (finished_flags.all() & stop_when_full).to(torch.float32) * NEG
        fin += float(not improvable) * NEG
        just_finished = hits & top_mask[None, :]  # (1, pool)
        fin += (~just_finished) * NEG
        merged = torch.cat((finished_scores, fin), dim=1)  # (1, k + pool)
        keep = torch.topk(merged, k=k)[1][0].tolist()  # (k,)
        merged_flags = torch.cat((finished_flags, just_finished), dim=1)  # (1, k + pool)
        new = {i - k for i in keep if i >= k and bool(merged_flags[0, i])}
        finished = [
            finished[i] if i < k else Hypothesis(cand_ids[i - k], float(top_scores[0, i - k]), 0.0, step) for i in keep
        ]
        finished_scores = merged[:, keep]
        finished_flags = merged_flags[:, keep]
        for h, s in zip(finished, finished_scores[0].tolist()):
            if h is not None:
                h.score = s

        record = _record(
            lm, step, live, logp, running, running_scores, parents, tokens, top_scores, hits, next_idx, new
        )
        record.finished = [h for h, f in zip(finished, finished_flags[0].tolist()) if f and h is not None]
        running = [list(cand_ids[i]) for i in next_idx]
        running_scores = run_scores[:, next_idx]
        # 5) stop, or reorder the cache to follow the surviving beams and decode their new tokens
        improvable = improvable and _improvable(
            running_scores, finished_scores, finished_flags, step + 1, max_new_tokens, length_penalty, early_stopping
        )
        all_full = bool(finished_flags.all()) and stop_when_full
        record.last = not improvable or all_full or bool(hits.all())
        result.stop_reason = _stop_reason(improvable, all_full, bool(hits.all()), ends)
        yield record
        if record.last:
            break
        cache.reorder_cache(torch.tensor([parents[i] for i in next_idx], device=dev))
        last = torch.tensor([[ids[-1]] for ids in running], device=dev)  # (k, 1)
        logits, cache = forward(lm, last, cache, prompt_len + step)

    result.best = finished[0]
    result.text = lm.tokenizer.decode(result.best.token_ids, skip_special_tokens=True)
    return result


def _stop_reason(improvable: bool, all_full: bool, all_hit: bool, at_limit: bool) -> str:
    if at_limit:
        return "max_new_tokens"
    if all_full:
        return "all_finished"
    if not improvable:
        return "cannot_improve"
    return "no_continuation" if all_hit else ""


def _improvable(running_scores, finished_scores, flags, gen_len, max_new_tokens, length_penalty, early_stopping):
    """transformers' heuristic: can the best live beam still beat the worst finished hypothesis?
    early_stopping=False assumes the live beam's score at today's length; "never" (with a positive
    penalty) assumes it could reach max length."""
    length = max_new_tokens if early_stopping == "never" and length_penalty > 0.0 else gen_len
    best_possible = running_scores[:, :1] / (length**length_penalty)  # (1, 1)
    worst = torch.where(flags, torch.min(finished_scores, dim=1, keepdim=True)[0], NEG)  # (1, k)
    return bool(torch.any(best_possible > worst))


def _record(lm, step, live, logp, running, running_scores, parents, tokens, top_scores, hits, next_idx, new):
    """The step as plain data: the pool with each candidate's fate, plus each beam's best outsiders."""
    cands = []
    for rank, (p, t, s) in enumerate(zip(parents, tokens, top_scores[0].tolist())):
        fate = "finished" if rank in new else "pruned"
        slot = next_idx.index(rank) if rank in next_idx and not bool(hits[0, rank]) else -1
        if slot >= 0:
            fate = "running"
        cands.append(BeamCandidate(p, t, "", float(logp[p, t]), s, rank, fate, slot))
    seen = set(zip(parents, tokens))
    for p in range(len(running)):
        if running_scores[0, p] <= NEG / 2:
            continue
        best = torch.topk(logp[p], k=len(seen) + EXTRA_PER_BEAM)[1].tolist()
        outside = [t for t in best if (p, t) not in seen][:EXTRA_PER_BEAM]
        for t in outside:
            lp = float(logp[p, t])
            cands.append(BeamCandidate(p, t, "", lp, float(running_scores[0, p]) + lp, -1, "pruned"))
    for c, text in zip(cands, token_texts(lm.tokenizer, [c.token_id for c in cands])):
        c.token_text = text
    return BeamStep(step, live, cands, [])


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
