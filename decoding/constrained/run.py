"""A decoding run under a grammar: decoding.loop.Run with the grammar supplied through Run's hooks (one more mask,
fast-forward, and a matcher that rolls back with Back); the loop itself is Run's.

Each step:
1) the grammar's keep-mask for the pending distribution (matcher.GrammarState);
2) process + select, with the grammar where the engine puts it (engines.choose), or the learner's token if legal;
3) the matcher consumes the token;
4) fast-forward: while the grammar forces what comes next (one continuation), those tokens are appended without
   sampling and without a pass of their own; they reach the model together, in one forward pass.
"""

from dataclasses import replace

import torch

from decoding.clock import Timer
from decoding.constrained.engines import Choice, Outcome, choose, outcomes
from decoding.constrained.kinds import Constraint
from decoding.constrained.matcher import GrammarState
from decoding.forward import kv_cache_bytes
from decoding.loop import Run, drive
from decoding.pipeline import SamplerSettings
from decoding.prompts import Prompt, token_texts
from decoding.stages import GRAMMAR
from decoding.trace import Candidate, Step, Trace


class ConstrainedRun(Run):
    """A Run whose every token is legal under `constraint`; `fast_forward` feeds forced tokens without sampling.
    It supplies the grammar through Run's hooks (as vLLM's guidance backend does: fill_bitmask, accept_tokens,
    rollback) and keeps none of the loop."""

    def __init__(self, lm, prompt: Prompt, constraint: Constraint, *, fast_forward: bool = True, **run_kwargs):
        super().__init__(lm, prompt, **run_kwargs)
        self.grammar = GrammarState(constraint, lm.tokenizer, lm.vocab_size, lm.device)
        self.fast_forward = fast_forward

    def outcomes(self, settings: SamplerSettings) -> list[Outcome]:
        """Each engine's order on the pending distribution (none when the next tokens are forced)."""
        if self.logits is None or self.done or self.forced():
            return []
        return outcomes(self.logits, settings, self.ids, self.generated, self.legal_mask())

    # --- Run's hooks ---

    def legal_mask(self) -> torch.Tensor:
        """1) the grammar's keep-mask for the pending distribution (V,)."""
        return self.grammar.keep_mask()[0]

    def forced(self) -> list[int]:
        """The tokens fast-forward will append next without asking the model (empty when it is off)."""
        return self.grammar.forced() if self.fast_forward else []

    def check_force(self, force_id: int) -> None:
        """The learner's token must be the forced one, if any, and legal; the refusal names the legal ones."""
        super().check_force(force_id)
        forced = self.forced()
        if (forced and force_id != forced[0]) or not self.grammar.legal(force_id):
            raise ValueError(self.grammar.refusal(force_id))

    def choose(self, settings: SamplerSettings, force_id: int | None) -> Step:
        """2) one token: forced by the grammar (fast-forward), the learner's (if legal), or chosen by the pipeline."""
        forced = self.forced()
        return self._forced_step(forced[0], settings) if forced else self._chosen_step(settings, force_id)

    def accepted(self, token_id: int) -> None:
        """3) the matcher consumes the token."""
        self.grammar.consume(token_id)

    def rewound(self, n: int) -> None:
        """Back: the matcher rolls back with the run."""
        self.grammar.rollback(n)

    def _chosen_step(self, settings: SamplerSettings, force_id: int | None) -> Step:
        keep, mask_ms = self.grammar.keep_mask()  # (V,)
        with Timer(self.lm.device) as t:
            if force_id is None:
                choice = choose(self.logits, settings, self.ids, self.generated, keep, self.generator)
            else:
                choice = Choice(self.preview(settings), force_id)
        step = self.record(choice.processed, choice.token, force_id is not None, settings, t.ms)
        illegal = torch.softmax(choice.processed.raw, dim=-1)[~keep].sum()
        return replace(
            step,
            allowed=int(keep.sum()),
            illegal_mass=float(illegal),
            mask_ms=mask_ms,
            resampled_from=choice.resampled_from,
        )

    def _forced_step(self, token: int, settings: SamplerSettings) -> Step:
        """A fast-forwarded token: the grammar leaves one continuation, so the model is not asked (no distribution:
        its probabilities, logit and rank are recorded as 0)."""
        text = token_texts(self.lm.tokenizer, [token])[0]
        return Step(
            index=len(self.trace.steps),
            phase="grammar",
            token_id=token,
            token_text=text,
            prob_before=0.0,
            prob_after=1.0,
            rank=0,
            forced=False,
            top=[Candidate(id=token, text=text, logit=0.0, prob_before=0.0, prob_after=1.0)],
            stages=[(GRAMMAR, 1)],
            kept_mass=0.0,
            entropy_bits=0.0,
            settings=settings.to_dict(),
            forward_ms=0.0,
            sample_ms=0.0,
            kv_bytes=kv_cache_bytes(self.cache),
            context_len=len(self.ids),
            allowed=1,
            grammar_forced=True,
        )


def calls_saved(trace: Trace) -> int:
    """Forward passes fast-forward saved: every forced token after the first step rode in another token's pass."""
    return sum(s.grammar_forced for s in trace.steps[1:])


def run_constrained(lm, prompt: Prompt, constraint: Constraint, settings: SamplerSettings, **run_kwargs) -> Trace:
    """A whole constrained run, to its end."""
    run = ConstrainedRun(lm, prompt, constraint, **run_kwargs)
    run.prefill()
    for _ in drive(run, settings):
        pass
    return run.trace
