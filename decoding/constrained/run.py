"""A decoding run under a grammar: decoding.loop.Run with one more mask, fast-forward, and Back that rolls the
matcher back with the run.

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
from decoding.loop import Run, kv_cache_bytes
from decoding.pipeline import Processed, SamplerSettings, process
from decoding.prompts import Prompt, token_texts
from decoding.trace import Candidate, Step, Trace


class ConstrainedRun(Run):
    """A Run whose every token is legal under `constraint`; `fast_forward` feeds forced tokens without sampling."""

    def __init__(self, lm, prompt: Prompt, constraint: Constraint, *, fast_forward: bool = True, **run_kwargs):
        super().__init__(lm, prompt, **run_kwargs)
        self.grammar = GrammarState(constraint, lm.tokenizer, lm.vocab_size, lm.device)
        self.fast_forward = fast_forward
        self.unfed: list[int] = []  # the newest tokens, appended but not yet fed to the model (a forced run)

    def forced(self) -> list[int]:
        """The tokens fast-forward will append next without asking the model (empty when it is off)."""
        return self.grammar.forced() if self.fast_forward else []

    def outcomes(self, settings: SamplerSettings) -> list[Outcome]:
        """Each engine's order on the pending distribution (none when the next tokens are forced)."""
        if self.logits is None or self.done or self.forced():
            return []
        return outcomes(self.logits, settings, self.ids, self.generated, self.grammar.keep_mask()[0])

    def preview(self, settings: SamplerSettings) -> Processed:
        assert self.logits is not None, "no pending distribution: the next tokens are forced, or the run is done"
        return process(self.logits, settings, self.ids, self.generated, grammar=self.grammar.keep_mask()[0])

    def step(self, settings: SamplerSettings, force_id: int | None = None) -> Step:
        """One token: forced by the grammar (fast-forward), the learner's (if legal), or chosen by the pipeline."""
        if self.done:
            raise ValueError(f"the run has stopped ({self.trace.stop_reason}); go back or reset")
        if force_id is not None and not (0 <= force_id < self.lm.vocab_size):
            raise ValueError(f"forced token id must be in [0, {self.lm.vocab_size}), got {force_id}")
        forced = self.forced()
        if forced and force_id is not None and force_id != forced[0]:
            raise ValueError(self.grammar.refusal(force_id))
        if force_id is not None and not self.grammar.legal(force_id):
            raise ValueError(self.grammar.refusal(force_id))
        self._rng_states.append(self.generator.get_state())
        step = self._forced_step(forced[0], settings) if forced else self._chosen_step(settings, force_id)
        self.grammar.consume(step.token_id)
        self.ids.append(step.token_id)
        self.unfed.append(step.token_id)
        self.trace.steps.append(step)
        self._update_text_and_stop(step.token_id)
        # 4) one pass for the token and every forced one after it, once no more are forced
        if not self.done and not self.forced():
            self._feed()
        return step

    def _chosen_step(self, settings: SamplerSettings, force_id: int | None) -> Step:
        keep, mask_ms = self.grammar.keep_mask()  # (V,)
        with Timer(self.lm.device) as t:
            if force_id is None:
                choice = choose(self.logits, settings, self.ids, self.generated, keep, self.generator)
            else:
                choice = Choice(self.preview(settings), force_id)
        step = self._record(choice.processed, choice.token, force_id is not None, settings, t.ms)
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
            top=[Candidate(token, text, 0.0, 0.0, 1.0)],
            stages=[("grammar", 1)],
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

    def _feed(self) -> None:
        """One forward pass over the tokens not yet fed: the next distribution."""
        past = len(self.ids) - len(self.unfed)
        self._forward(self.unfed, self.cache, past)
        self._phase, self.unfed = "decode", []

    def back(self) -> None:
        """Undo the last token, in the run and in the matcher."""
        if not self.trace.steps:
            raise ValueError("nothing to go back to: no token has been generated yet")
        self.trace.steps.pop()
        self.ids.pop()
        self.grammar.rollback(1)
        self.generator.set_state(self._rng_states.pop())
        self.trace.stop_reason = None
        self._update_text(self.generated)
        if not self.trace.steps:
            self.cache, self.unfed = None, []
            self.prefill()
            return
        # keep the cache up to the tokens still valid; a distribution is needed unless the next token is forced
        need_logits = not self.forced()
        cached = self.cache.get_seq_length()
        keep = min(cached, len(self.ids) - (1 if need_logits else 0))
        if cached > keep:
            self.cache.crop(keep - cached)
        self.unfed, self.logits = self.ids[keep:], None
        if need_logits:
            self._feed()


def calls_saved(trace: Trace) -> int:
    """Forward passes fast-forward saved: every forced token after the first step rode in another token's pass."""
    return sum(s.grammar_forced for s in trace.steps[1:])


def run_constrained(lm, prompt: Prompt, constraint: Constraint, settings: SamplerSettings, **run_kwargs) -> Trace:
    """A whole constrained run, to its end."""
    run = ConstrainedRun(lm, prompt, constraint, **run_kwargs)
    run.prefill()
    while not run.done:
        run.step(settings)
    return run.trace
