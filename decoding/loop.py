"""The decode loop, one token at a time.

1) prefill: the whole prompt in one forward pass fills the KV cache and gives the first distribution;
2) process: the sampler pipeline turns those logits into a distribution with each stage's mask;
3) select: argmax, a seeded draw, or a token the learner forces;
4) decode: one forward pass on the chosen token extends the cache and gives the next distribution.
Repeat 2-4 until a stop condition fires. `Run` does one step per call so the app can pause, go back
and branch; `drive` steps it to the end, and `generate_steps` is the whole loop as a generator.
"""

import copy
from collections.abc import Callable, Iterator
from typing import NamedTuple

import torch

from decoding import stopping
from decoding.checkpoints import Checkpoints
from decoding.clock import Timer
from decoding.forward import forward_one, kv_cache_bytes, rewind
from decoding.models import LoadedModel
from decoding.passes import KINDS, Pass
from decoding.pipeline import Processed, SamplerSettings, process, select
from decoding.prompts import Prompt
from decoding.recent import Recent
from decoding.record import Timings, record_step, timed
from decoding.stages import GRAMMAR
from decoding.static import StaticStep
from decoding.trace import Step, Trace
from decoding.watch import Deadline

MAX_NEW_TOKENS_CAP = 4096
# processed distributions kept for other sessions (decoding.recent): a class on one preset processes its first once;
# each holds a few V-sized tensors (~1 MB for the bundled model)
KEPT = 8
_PROCESSED, _PREVIEWED = Recent(KEPT), Recent(KEPT)  # the distributions, and their records as previews


class Passed(NamedTuple):
    """What a forward pass gave a run: the last position's logits (V,) float32 (None: nothing to choose from), the
    cache it left, how it ran, and what a caller's own pass returned beside them (the lens: every layer's hidden
    state)."""

    logits: torch.Tensor | None
    cache: object
    passed: Pass
    extra: object = None


class _Before(NamedTuple):
    """What a step puts back if it fails part way: how many ids and steps the run had, its unfed tokens, its cache's
    length, its pending distribution (the logits, how their pass ran, processed), its text (visible, held, stop)."""

    n_ids: int
    n_steps: int
    unfed: list[int]
    cache_len: int
    logits: torch.Tensor | None
    last_pass: Pass
    processed: "_Preview | None"
    text: tuple


class _Preview(NamedTuple):
    """A processed pending distribution and what it was computed from: the same logits object, as many ids, the same
    settings give the same `Processed`."""

    logits: torch.Tensor
    n_ids: int
    settings: SamplerSettings
    processed: Processed


def check_fits(lm: LoadedModel, prompt_tokens: int, max_new_tokens) -> None:
    """A run's length rule, before any work for it: max new tokens in range, and the prompt plus them in the model's
    context window (a ValueError naming both)."""
    if not (isinstance(max_new_tokens, int) and 1 <= max_new_tokens <= MAX_NEW_TOKENS_CAP):
        raise ValueError(f"max_new_tokens must be an integer in [1, {MAX_NEW_TOKENS_CAP}], got {max_new_tokens!r}")
    if prompt_tokens + max_new_tokens > lm.context_length:
        raise ValueError(
            f"prompt ({prompt_tokens} tokens) + max_new_tokens ({max_new_tokens}) exceeds "
            f"the context window of {lm.context_length} tokens"
        )


class Run:
    """One decoding run, stepped by the caller; it holds the KV cache, so it lives on the server. With a `scheduler`
    (decoding.serving) its forward passes ride in the scheduler's ticks with other sessions' steps; `alone` asks for
    passes of its own (bit-exact with generate()). Sampling always happens here, with the run's own generator.
    `path` is the kind of its one-token passes (decoding.passes.KINDS): "eager" on a growing cache; "static" through
    a static cache (decoding.static), "captured" with that step replayed as a CUDA graph: the same tokens, its passes
    always its own. Every pass goes through `_pass`, and its result reaches the run's fields through `_install` only.
    A run under rules of its own (decoding.constrained: a grammar) overrides the hooks below, never the loop;
    `forced` tokens are appended unfed and reach the model together, in one pass."""

    def __init__(
        self,
        lm: LoadedModel,
        prompt: Prompt,
        *,
        seed=0,
        max_new_tokens=64,
        stop_strings=(),
        top_n=20,
        scheduler=None,
        alone: bool = False,
        path: str = "eager",
    ):
        check_fits(lm, len(prompt.ids), max_new_tokens)
        if not (isinstance(top_n, int) and 1 <= top_n <= 100):
            raise ValueError(f"top_n must be an integer in [1, 100], got {top_n!r}")
        if path not in KINDS:
            raise ValueError(f"path must be one of {', '.join(KINDS)}, got {path!r}")
        if path != "eager" and scheduler is not None:
            raise ValueError(f"a {path} run runs its own passes: the scheduler packs growing caches only")
        self.lm, self.prompt, self.top_n, self.seed = lm, prompt, top_n, int(seed)
        self.trace = Trace(
            model_id=lm.model_id,
            model_label=lm.label,
            device=str(lm.device),
            dtype=lm.dtype_name,
            prompt=prompt.text,
            prompt_ids=list(prompt.ids),
            prompt_tokens=list(prompt.tokens),
            seed=self.seed,
            max_new_tokens=max_new_tokens,
            stop_strings=list(stopping.check_stop_strings(stop_strings)),
        )
        self.generator = torch.Generator(device=lm.device).manual_seed(self.seed)
        self.ids = list(prompt.ids)
        self.unfed: list[int] = []  # the newest tokens, appended but not yet fed to the model
        # logits (V,) float32: the distribution the next step chooses from; cache; last_pass: how they came to be
        self._install(Passed(None, None, Pass(0.0)))  # no pass yet
        self.scheduler, self.alone = scheduler, alone
        self._phase, self.path = "prefill", path
        room = len(prompt.ids) + max_new_tokens  # a static cache holds the whole run from its first pass
        self.static = StaticStep(lm, room, capture=path == "captured") if path != "eager" else None
        self.checkpoints = Checkpoints(self.generator)  # before each step, so Back can replay a draw
        self._processed: _Preview | None = None  # the pending distribution, processed once

    @property
    def done(self) -> bool:
        return self.trace.stop_reason is not None

    @property
    def generated(self) -> list[int]:
        return self.ids[len(self.prompt.ids) :]

    # --- the hooks (a plain run has no rules of its own); then the loop ---

    def legal_mask(self) -> torch.Tensor | None:
        """The tokens allowed next as a (V,) bool keep-mask, one more filter in the pipeline; None: all of them."""
        return None

    def forced(self) -> list[int]:
        """The tokens that come next without asking the model (none for a plain run)."""
        return []

    def check_force(self, force_id: int) -> None:
        """Raise a ValueError that teaches when the learner may not force `force_id` here."""
        if not (0 <= force_id < self.lm.vocab_size):
            raise ValueError(f"forced token id must be in [0, {self.lm.vocab_size}), got {force_id}")

    def choose(self, settings: SamplerSettings, force_id: int | None) -> Step:
        """2) process, 3) select: the next token (the learner's `force_id`, if given), recorded as a Step."""
        with Timer(self.lm.device) as t:
            processed = self.preview(settings)
            chosen = select(processed.final, settings, self.generator) if force_id is None else force_id
        return self.record(processed, chosen, force_id is not None, settings, t.ms)

    def accepted(self, token_id: int) -> None:
        """`token_id` is about to be appended to the run."""

    def rewound(self, n: int) -> None:
        """Back removed the last `n` tokens."""

    def prefill(
        self,
        shared: "Prefilled | None" = None,
        stop: Callable[[], bool] | None = None,
        told: Callable[[int, int], None] | None = None,
    ) -> None:
        """1) prefill: the whole prompt in one pass (or in chunks, beside other sessions' steps). With `shared`, the
        prompt's pass that another caller ran once for many runs of this prompt (`prefill_once`): the run starts from
        a copy of its cache and its logits, exactly what its own pass would have computed, recorded as "cached".
        `stop()` true between two of the scheduler's chunks raises `decoding.watch.Cancelled`: the run is as before.
        `told(read, of)` after each of those chunks: how far the prompt is read."""
        self.unfed = []
        if shared is None:
            self._install(self._pass(self.ids, 0, stop=stop, told=told))
        else:
            if shared.ids != tuple(self.ids) or self.static is not None or self.scheduler is not None:
                raise ValueError("a shared prefill is of this prompt, for a run that runs its own eager passes")
            # copies: the run grows its cache, and the next run of the prompt starts from it as it was
            first = shared.passed
            passed = Pass(first.ms, mode="cached", computed_ms=first.ms, impl=first.impl, origin="shared")
            copied = Passed(shared.logits.clone(), copy.deepcopy(shared.cache), passed)
            self._install(copied)
        self.trace.prefill_ms, self.trace.prefill_computed_ms = self.last_pass.ms, self.last_pass.computed_ms
        self._phase = "prefill"

    def preview(self, settings: SamplerSettings) -> Processed:
        """The pipeline applied to the pending distribution, without choosing. Computed once per distribution and
        settings: the inspectors, the panels and the choice all read the same `Processed` (treat it as read-only:
        another session with exactly these logits, settings and context reads it too). A new forward pass makes new
        logits, and a step or Back changes the ids: either one computes it afresh."""
        logits = self.logits  # read once: a concurrent refeed may install other logits between two reads
        assert logits is not None, "no pending distribution: prefill() first (none once done, or while forced)"
        known = self._processed
        if known is not None and known.logits is logits and known.n_ids == len(self.ids) and known.settings == settings:
            return known.processed
        grammar = self.legal_mask()
        # without a grammar (the run's own state) it is a function of the logits, the settings and the context alone:
        # a session with exactly these reads the one another session processed (decoding.recent)
        inputs = (settings, tuple(self.ids), len(self.prompt.ids)) if grammar is None else None
        processed = _PROCESSED.get(logits, inputs) if inputs is not None else None
        if processed is None:
            processed = process(logits, settings, self.ids, self.generated, grammar=grammar)
            if inputs is not None:
                _PROCESSED.put(logits, inputs, processed)
        self._processed = _Preview(logits, len(self.ids), settings, processed)
        return processed

    def preview_step(self, settings: SamplerSettings) -> Step:
        """The pending distribution recorded as a Step (token = what greedy would pick), nothing chosen. Without a
        grammar its record is shared as its distribution is (`preview`): a session with exactly these logits, settings
        and context copies another's, with its own timings in it."""
        p = self.preview(settings)
        inputs = (settings, tuple(self.ids), len(self.prompt.ids), len(self.trace.steps), self.top_n, self.lm.model_id)
        # kept under the logits `p` came from (their float32 copy), not the run's field read again
        kept = _PREVIEWED.get(p.raw, inputs) if GRAMMAR not in p.stages else None
        if kept is not None:
            return timed(kept, self._timings(0.0))
        step = self.record(p, int(torch.argmax(p.final)), False, settings, 0.0)
        if GRAMMAR not in p.stages:
            _PREVIEWED.put(p.raw, inputs, step)
        return step

    def step(self, settings: SamplerSettings, force_id: int | None = None, *, feed: bool = True) -> Step:
        """Choose the next token and append it; then one forward pass on it, unless `feed` is False: the caller then
        feeds it with other runs' tokens in one packed pass (`decoding.serving.ragged.feed_together`)."""
        if self.done:
            raise ValueError(f"the run has stopped ({self.trace.stop_reason}); go back or reset")
        if force_id is not None:
            self.check_force(force_id)
        before = self._before_step()
        self.checkpoints.mark(len(self.ids))
        try:
            step = self.choose(settings, force_id)
            self._processed = None  # the distribution it chose from is spent
            self.accepted(step.token_id)
            self.ids.append(step.token_id)
            self.unfed.append(step.token_id)
            self.trace.steps.append(step)
            self._update_text_and_stop(step.token_id)
            # 4) decode: one forward pass on the new token(s), once none is forced (skipped once the run has stopped)
            if feed and not self.done and not self.forced():
                self.feed()
        except BaseException:
            self._put_back(before)  # a step happens whole or not at all
            raise
        return step

    def _before_step(self) -> "_Before":
        cache_len = 0 if self.cache is None else int(self.cache.get_seq_length())
        text = (self.trace.text, self.trace.held_text, self.trace.stop_reason)
        pending = (self.logits, self.last_pass, self._processed)
        return _Before(len(self.ids), len(self.trace.steps), list(self.unfed), cache_len, *pending, text)

    def _put_back(self, before: "_Before") -> None:
        """The run as it was before a step that failed part way (its pass raised, in a scheduler's tick or alone): the
        ids, the unfed tokens, the trace and its text, the generator (its checkpoint), the rules' state, the cache's
        length, the pending distribution and how it came to be. The next step chooses from the same distribution."""
        accepted = len(self.ids) > before.n_ids  # `accepted` runs just before the token is appended
        del self.trace.steps[before.n_steps :]
        del self.ids[self.checkpoints.undo() :]  # the generator as it was before the choice
        if accepted:
            self.rewound(1)
        self.unfed = before.unfed
        self.trace.text, self.trace.held_text, self.trace.stop_reason = before.text
        if self.cache is not None:
            rewind(self.cache, before.cache_len)  # what the failed pass wrote, layer by layer
        self._install(Passed(before.logits, self.cache, before.last_pass))
        self._processed = before.processed

    @property
    def hungry(self) -> bool:
        """Whether the run waits for a pass over its unfed tokens before it can choose (after `step(feed=False)`)."""
        return bool(self.unfed) and not self.done and not self.forced()

    def fed(self, logits: torch.Tensor, passed: Pass) -> None:
        """The pending distribution from a pass the caller ran over this run's unfed tokens, written into its own
        cache (`decoding.serving.ragged.feed_together`): `logits` (V,) float32."""
        if not self.hungry:
            raise ValueError("the run has no unfed tokens waiting for a pass")
        self._install(Passed(logits, self.cache, passed))  # the pass wrote into the run's own cache
        self._phase, self.unfed = "decode", []

    def back(self) -> None:
        """Undo the last step: trim the KV cache and recompute only the last position's logits."""
        if not self.trace.steps:
            raise ValueError("nothing to go back to: no token has been generated yet")
        self.trace.steps.pop()
        del self.ids[self.checkpoints.undo() :]  # one token, and the generator as it was before it was chosen
        self.rewound(1)
        self.trace.stop_reason = None
        self._update_text(self.generated)
        self.refeed()

    def refeed(self) -> None:
        """The pending distribution again, from a new pass over the last position (none while the next is forced):
        after Back, and when the learner asks for passes of their own (`alone`), so the next choice comes from one."""
        if not self.trace.steps:
            self._install(Passed(None, None, self.last_pass))  # the old cache let go before the prompt's new pass
            return self.prefill()
        need_logits = not self.forced()
        keep = min(self.cache.get_seq_length(), len(self.ids) - (1 if need_logits else 0))
        rewind(self.cache, keep)
        self.unfed = self.ids[keep:]
        self._spend()  # they were the distribution after the positions just cut
        if need_logits:
            self.feed()

    def pass_with(self, forward) -> tuple:
        """The pending distribution again, from an eager pass of the caller's over the last position: `forward(lm, ids,
        cache)` returns (logits, extra, cache), as the logit lens's pass returns every layer's hidden states. Its logits
        become the pending ones, as after `refeed`, so the next step chooses from exactly what the caller read; its
        time is the step's forward time, named "lens". Returns (logits, extra)."""
        if self.logits is None or self.cache is None:
            raise ValueError("no distribution to look into: press Prefill (or Back, once the run has stopped)")
        passed = self._pass(self.ids[-1:], len(self.ids) - 1, forward)
        self._install(passed)
        self.unfed = []
        return passed.logits, passed.extra

    def feed(self) -> None:
        """One forward pass over the tokens not yet fed: the next distribution."""
        self._install(self._pass(self.unfed, len(self.ids) - len(self.unfed)))
        self._phase, self.unfed = "decode", []

    # --- one way in: every pass of the run, and the one place its result lands ---

    def _pass(
        self,
        ids: list[int],
        past: int,
        forward=None,
        stop: Callable[[], bool] | None = None,
        told: Callable[[int, int], None] | None = None,
    ) -> Passed:
        """Every forward pass of the run: `ids` at positions past .. past + T - 1 onto the run's cache (a new one at
        0), run the way this run's passes go, chosen here as nano-vllm's `ModelRunner.run` chooses eager or graph:
        - `forward` given: the caller's own eager pass, `forward(lm, ids, cache)` over the run's ids, reading the last
          position again ("lens": the logit lens's, with every layer's hidden state);
        - a static run: one token through its static step ("static", or "captured": a CUDA graph's replay), more
          tokens (the prompt, forced tokens) in one eager pass on the same cache;
        - with a scheduler: in its next tick, packed with other sessions' tokens, alone, or from the prefix cache (a
          prompt in chunks stops between two once `stop()` is true, and `told(read, of)` hears after each);
        - else an eager pass of its own ("solo").
        Returns what the pass gave; `_install` makes it the run's."""
        if forward is not None:
            with Timer(self.lm.device) as t:
                logits, extra, cache = forward(self.lm, self.ids, self.cache)
            return Passed(logits, cache, Pass(t.ms, mode="lens"), extra)
        cache = self.cache if past else None
        if self.static is not None:
            return _static_pass(self.static, ids, past)
        if self.scheduler is not None:
            return Passed(*self.scheduler.forward(ids, cache, past, alone=self.alone, stop=stop, told=told))
        return eager_pass(self.lm, ids, cache, past)

    def _install(self, passed: Passed) -> None:
        """The only place the run's pending logits, its cache and how its last pass ran are set: from `_pass`, from a
        pass run for several runs (`fed`), from a shared prefill, or spent (`_spend`)."""
        self.logits, self.cache, self.last_pass = passed.logits, passed.cache, passed.passed

    def _spend(self) -> None:
        """No distribution to choose from (the run stopped, or its cache moved back); the cache and its pass stay."""
        self._install(Passed(None, self.cache, self.last_pass))

    def _update_text_and_stop(self, chosen: int) -> None:
        text = self._update_text(self.generated)
        reason = stopping.stop_reason(chosen, len(self.generated), text, self.lm.eos_ids, self.trace.max_new_tokens)
        if reason is not None:
            held = text.held if reason != stopping.STOP_STRING else ""  # a stop string's text is cut
            self.trace.stop_reason, self.trace.text, self.trace.held_text = reason, text.visible + held, ""
            self._spend()

    def _update_text(self, generated: list[int]) -> stopping.TextState:
        text = stopping.split_text(
            self.lm.tokenizer.decode(generated, skip_special_tokens=True), tuple(self.trace.stop_strings)
        )
        self.trace.text, self.trace.held_text = text.visible, text.held
        return text

    def record(self, p: Processed, chosen: int, forced: bool, settings: SamplerSettings, sample_ms: float) -> Step:
        """The step that chose `chosen` from `p`, with how its forward pass ran and the cache it left."""
        return record_step(
            p,
            chosen,
            forced=forced,
            settings=settings,
            index=len(self.trace.steps),
            timings=self._timings(sample_ms),
            tokenizer=self.lm.tokenizer,
            top_n=self.top_n,
        )

    def _timings(self, sample_ms: float) -> Timings:
        """How this run's pending distribution came to be: its forward pass, the cache it left, choosing from it."""
        return Timings(
            phase=self._phase,
            forward_ms=self.last_pass.ms,
            rows=self.last_pass.rows,
            pass_mode=self.last_pass.mode,
            pass_kind=self.last_pass.kind,
            pass_impl=self.last_pass.impl,
            pass_origin=self.last_pass.origin,
            noise=self.last_pass.noise,
            sample_ms=sample_ms,
            kv_bytes=kv_cache_bytes(self.cache),
            context_len=len(self.ids),
        )


def eager_pass(lm: LoadedModel, ids: list[int], cache, past: int) -> Passed:
    """One eager pass of its own (decoding.forward), timed: `ids` at positions past .. past + T - 1."""
    with Timer(lm.device) as t:
        logits, cache = forward_one(lm, ids, cache, past)  # (V,)
    return Passed(logits, cache, Pass(t.ms))


def _static_pass(static: StaticStep, ids: list[int], past: int) -> Passed:
    """A static run's pass: one token through the static step (captured or not), more in one eager pass."""
    if past == 0:  # a new prefill (after Back to the start): the cache's old positions are overwritten
        static.rewind(0)
    with Timer(static.lm.device) as t:
        logits = static.feed(ids, past)  # (V,)
    return Passed(logits, static.cache, Pass(t.ms, kind=static.kind_of(len(ids))))


class Prefilled(NamedTuple):
    """A prompt's prefill, computed once for many runs of the same prompt (`Run.prefill(shared=...)`): its ids, the
    logits after it (V,), its cache, and how its pass ran. Each run copies the cache: none of them changes it."""

    ids: tuple[int, ...]
    logits: torch.Tensor
    cache: object
    passed: Pass


def prefill_once(lm: LoadedModel, ids: list[int]) -> Prefilled:
    """One pass over the prompt, for every run of it that follows (a measurement's samples, one seed each)."""
    logits, cache, passed, _ = eager_pass(lm, list(ids), None, 0)
    return Prefilled(tuple(ids), logits, cache, passed)


def drive(
    run,
    settings: SamplerSettings | None = None,
    *,
    limit: int | None = None,
    advance=None,
    deadline: Deadline | None = None,
) -> Iterator:
    """The one "to the end" loop: advance a prefilled `run` until `run.done`, or `limit` times, yielding what each
    advance returns (a generator: the caller shows each step, cancels between them). `advance` is `run.step(settings)`
    unless given: a speculative run passes its `round`, a page one decision with the tokens forced after it. Past
    `deadline` (a request's time limit) the next advance is not taken: OverLimit says why, the steps taken stay."""
    advance = advance if advance is not None else lambda: run.step(settings)
    taken = 0
    while not run.done and (limit is None or taken < limit):
        if deadline is not None and taken:
            deadline.check()
        yield advance()
        taken += 1


def generate_steps(lm: LoadedModel, prompt: Prompt, settings: SamplerSettings, **run_kwargs) -> Iterator[Step]:
    """The loop as a generator (returns the trace): the first `next()` includes the prefill, so it is the TTFT."""
    run = Run(lm, prompt, **run_kwargs)
    run.prefill()
    yield from drive(run, settings)
    return run.trace


def run_to_end(lm: LoadedModel, prompt: Prompt, settings: SamplerSettings, **run_kwargs) -> Trace:
    """A whole run, prefill to stop: its trace."""
    run = Run(lm, prompt, **run_kwargs)
    run.prefill()
    for _ in drive(run, settings):
        pass
    return run.trace
