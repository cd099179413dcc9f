"""Speculative decoding, one round at a time.

0) prefill: the prompt but its last token fills the target's KV cache (and the early-exit draft's);
then each round:
1) draft: K guesses from prompt lookup or from the model's first L layers;
2) verify: the last accepted token + the K guesses in one forward pass of the target -> K + 1 distributions,
   each put through the sampler pipeline with its own context (penalties see the guesses before it);
3) accept: greedy keeps guesses while they equal the argmax; sampling applies min(1, p/q) (decoding.speculative.accept);
   the target's own token after them (the bonus) comes free from the same pass;
4) crop the KV cache back to the accepted prefix, and go again.
A round emits between 1 and K + 1 tokens for one pass of the target. `SpecRun` steps it, with Back.
"""

from dataclasses import dataclass

import torch

from decoding import stopping
from decoding.checkpoints import Checkpoints
from decoding.clock import Timer
from decoding.forward import forward_one, rewind
from decoding.loop import MAX_NEW_TOKENS_CAP, drive
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings, process
from decoding.prompts import token_texts
from decoding.speculative import accept
from decoding.speculative.drafts import EarlyExit, Proposal, check_exit_layer, lookup
from decoding.speculative.records import EARLY_EXIT, PROMPT_LOOKUP, SOURCES, Check, Round, SpecResult
from decoding.speculative.verify import verify
from decoding.watch import Watch

MAX_DRAFT_TOKENS = 16
TOP = 6  # tokens of each distribution kept in a round's record


def check_settings(lm: LoadedModel, source, draft_tokens, exit_layer, max_new_tokens) -> None:
    if source not in SOURCES:
        raise ValueError(f"draft source must be one of {', '.join(SOURCES)}, got {source!r}")
    k = draft_tokens
    if not (isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= MAX_DRAFT_TOKENS):
        raise ValueError(f"draft tokens K must be a whole number in [1, {MAX_DRAFT_TOKENS}], got {k!r}")
    if source == EARLY_EXIT:
        check_exit_layer(lm, exit_layer)
    if not (isinstance(max_new_tokens, int) and 1 <= max_new_tokens <= MAX_NEW_TOKENS_CAP):
        raise ValueError(f"max_new_tokens must be a whole number in [1, {MAX_NEW_TOKENS_CAP}], got {max_new_tokens!r}")


class SpecRun:
    """One speculative run, stepped a round at a time by the caller. Holds KV caches, so it lives on the server."""

    def __init__(
        self,
        lm: LoadedModel,
        prompt_ids: list[int],
        settings: SamplerSettings,
        *,
        source: str = PROMPT_LOOKUP,
        draft_tokens: int = 5,
        exit_layer: int | None = None,
        seed: int = 0,
        max_new_tokens: int = 64,
    ):
        check_settings(lm, source, draft_tokens, exit_layer, max_new_tokens)
        if not prompt_ids or len(prompt_ids) + max_new_tokens > lm.context_length:
            raise ValueError(f"the prompt (1 token at least) + max new tokens must fit {lm.context_length} tokens")
        self.lm, self.settings, self.k = lm, settings, draft_tokens
        self.prompt_len = len(prompt_ids)
        self.ids, self.cache = list(prompt_ids), None
        self.generator = torch.Generator(device=lm.device).manual_seed(int(seed))
        self.draft = EarlyExit(lm, exit_layer) if source == EARLY_EXIT else None
        self.result = SpecResult(source, draft_tokens, exit_layer if self.draft else None, list(prompt_ids))
        self.result.device, self.result.model, self.result.dtype = str(lm.device), lm.label, lm.dtype_name
        self.max_new, self.prefilled = max_new_tokens, False
        self.checkpoints = Checkpoints(self.generator)  # before each round, as a Run's before each step

    @property
    def rounds(self) -> list[Round]:
        return self.result.rounds

    @property
    def generated(self) -> list[int]:
        return self.ids[self.prompt_len :]

    @property
    def done(self) -> bool:
        return self.result.stop_reason is not None

    def prefill(self) -> None:
        # 0) the prompt but its last token: every round then feeds the last accepted token + K guesses
        with Timer(self.lm.device) as t:
            if len(self.ids) > 1:
                _, self.cache = forward_one(self.lm, self.ids[:-1], None, 0)
                if self.draft is not None:
                    self.draft.prefill(self.ids[:-1])
        self.result.prefill_ms, self.prefilled = t.ms, True

    def round(self) -> Round:
        if not self.prefilled:
            raise ValueError("prefill first: the prompt must be in the KV cache before a round")
        if self.done:
            raise ValueError(f"the run has stopped ({self.result.stop_reason}); go back or reset")
        context_len = len(self.ids)
        self.checkpoints.mark(context_len)
        # never guess a token that could not be kept: a round emits at most K + 1, and the limit is max new tokens
        k = min(self.k, self.max_new - len(self.generated) - 1)
        # 1) draft
        proposal = self._propose(k)
        drafted = proposal.tokens
        # 2) verify: one pass over K + 1 positions
        with Timer(self.lm.device) as tv:
            logits, self.cache = verify(self.lm, [self.ids[-1], *drafted], self.cache, context_len - 1)  # (K + 1, V)
        cache_verified = self.cache.get_seq_length()
        # 3) accept: every position through the pipeline with its own context, then the rule
        with Timer(self.lm.device) as ta:
            contexts = [self.ids + drafted[:i] for i in range(len(drafted) + 1)]
            processed = [process(logits[i], self.settings, c, c[self.prompt_len :]) for i, c in enumerate(contexts)]
            if self.settings.greedy:
                decision = accept.accept_greedy(torch.stack([x.final for x in processed]), drafted)
            else:
                p = torch.stack([x.probs_after for x in processed])  # (K + 1, V)
                q = torch.stack(proposal.q) if proposal.q else None  # (K, V)
                decision = accept.accept_sampled(p, q, drafted, self.generator)
        kept = self._keep(drafted[: decision.accepted] + [decision.bonus])
        # 4) the cache keeps the accepted prefix: every id but the last, which the next round feeds
        rewind(self.cache, len(self.ids) - 1)
        record = self._record(proposal, processed, decision, context_len, kept)
        record.cache_verified, record.cache_cropped = cache_verified, self.cache.get_seq_length()
        record.draft_ms, record.verify_ms, record.accept_ms = proposal.ms, tv.ms, ta.ms
        self.rounds.append(record)
        return record

    def _propose(self, k: int) -> Proposal:
        if k <= 0:
            return Proposal([])
        if self.draft is not None:
            return self.draft.propose(self.ids, k, self.settings, self.generator, self.prompt_len)
        with Timer(self.lm.device) as t:
            proposal = lookup(self.ids, k, self.lm.eos_ids)
        proposal.ms = t.ms
        return proposal

    def _keep(self, tokens: list[int]) -> int:
        """Append the round's tokens up to an end-of-sequence token or the limit; returns how many."""
        n = 0
        for token in tokens:
            self.ids.append(token)
            n += 1
            # no stop strings here: the same rule as a Run's, without them
            reason = stopping.stop_reason(token, len(self.generated), None, self.lm.eos_ids, self.max_new)
            if reason is not None:
                self.result.stop_reason = reason
                break
        self.result.token_ids = list(self.generated)
        return n

    def _record(self, proposal: Proposal, processed, decision: accept.Decision, context_len: int, kept: int) -> Round:
        drafted, n = proposal.tokens, decision.accepted
        probs = torch.stack([x.probs_after for x in processed])  # (K + 1, V)
        best = torch.argmax(torch.stack([x.final for x in processed]), dim=-1).tolist()  # (K + 1,)
        top_p, top_ids = torch.topk(probs, k=min(TOP, probs.shape[-1]), dim=-1)  # (K + 1, TOP), one call a round
        positions = []
        for i, (values, ids) in enumerate(zip(top_p.tolist(), top_ids.tolist())):
            d = drafted[i] if i < len(drafted) else None
            q = proposal.q[i] if proposal.q and d is not None else None
            # the target's likeliest tokens that it can still pick, the draft's, and the guess itself
            top = [t for t, v in zip(ids, values) if v > 0]
            top += (_top(q, 3) if q is not None else []) + ([d] if d is not None else [])
            positions.append(Position(drafted=d, q=q, top=list(dict.fromkeys(top))))
        residual_top = _top(decision.residual) if decision.residual is not None else []
        named = set(drafted) | {decision.bonus} | set(residual_top) | set(best)
        for position in positions:
            named |= set(position.top)
        ids = sorted(named)
        texts = dict(zip(ids, token_texts(self.lm.tokenizer, ids)))
        checks = [self._check(i, at, probs[i], best[i], texts, decision) for i, at in enumerate(positions)]
        residual = [(t, texts[t], float(decision.residual[t])) for t in residual_top]
        return Round(
            index=len(self.rounds),
            source=self.result.source,
            context_len=context_len,
            drafted=list(drafted),
            drafted_text=[texts[t] for t in drafted],
            accepted=n,
            bonus_id=decision.bonus,
            bonus_text=texts[decision.bonus],
            bonus_from=decision.bonus_from,
            checks=checks,
            residual=residual,
            match=proposal.match,
            kept=kept,
            draft_passes=proposal.passes,
        )

    @staticmethod
    def _check(i: int, at: "Position", probs: torch.Tensor, best: int, texts: dict, decision: accept.Decision) -> Check:
        """Position i of the round: the drafted token's p and q, the target's choice, and the decision."""
        d, q_of, top = at.drafted, at.q_of, at.top
        p_of = dict(zip(top, probs[top].tolist()))  # the row's named tokens, read in one go
        return Check(
            index=i,
            draft_id=d,
            draft_text=texts[d] if d is not None else "",
            p=p_of[d] if d is not None else 0.0,
            q=q_of(d) if d is not None else 0.0,
            target_id=best,
            target_text=texts[best],
            uniform=decision.uniforms[i] if i < len(decision.uniforms) else None,
            accepted=None if d is None or i > decision.accepted else i < decision.accepted,
            top=[(t, texts[t], p_of[t], q_of(t) if d is not None else 0.0) for t in top],
        )

    def back(self) -> None:
        """Undo the last round: drop its tokens, crop the caches, and restore the random generator."""
        if not self.rounds:
            raise ValueError("nothing to go back to: no round has run yet")
        self.rounds.pop()
        del self.ids[self.checkpoints.undo() :]  # the round's tokens, and the generator as it was before it drafted
        self.result.stop_reason, self.result.token_ids = None, list(self.generated)
        rewind(self.cache, len(self.ids) - 1)  # the early-exit draft crops its own cache when it next drafts

    def run_to_end(self, watch: Watch | None = None) -> SpecResult:
        """Prefill if needed, then rounds until a stop; `watch.check()` between rounds (others' turns, Cancel)."""
        watch = watch or Watch()
        if not self.prefilled:
            self.prefill()

        def advance() -> Round:
            watch.check()
            record = self.round()
            watch.on_progress(len(self.generated) / self.max_new, f"{len(self.generated)} tokens")
            return record

        for _ in drive(self, advance=advance):
            pass
        self.result.text = self.lm.tokenizer.decode(self.generated, skip_special_tokens=True)
        return self.result


@dataclass
class Position:
    """One position of a round's verify pass, as its record names it: the token drafted there (None at the bonus
    position), the draft's distribution there (None for prompt lookup, which guesses one token with certainty), and
    the tokens the record shows."""

    drafted: int | None
    q: torch.Tensor | None
    top: list[int]

    def q_of(self, token: int) -> float:
        """The draft's probability of `token` here: from its distribution, or 1 for the one token a lookup guessed."""
        return float(self.q[token]) if self.q is not None else float(token == self.drafted)


def _top(probs: torch.Tensor, k: int = TOP) -> list[int]:
    return torch.topk(probs, k=min(k, probs.numel())).indices.tolist()
