"""The decode loop, one token at a time.

1) prefill: the whole prompt in one forward pass fills the KV cache and gives the first distribution;
2) process: the sampler pipeline turns those logits into a distribution with each stage's mask;
3) select: argmax, a seeded draw, or a token the learner forces;
4) decode: one forward pass on the chosen token extends the cache and gives the next distribution.
Repeat 2-4 until a stop condition fires. `Run` does one step per call so the app can pause, go back
and branch; `generate_steps` is the same loop as a generator.
"""

from collections.abc import Iterator

import torch

from decoding import stopping
from decoding.clock import Timer
from decoding.forward import forward_one, kv_cache_bytes, rewind
from decoding.models import LoadedModel
from decoding.pipeline import Processed, SamplerSettings, process, select
from decoding.prompts import Prompt
from decoding.record import Timings, record_step
from decoding.serving.passes import Pass
from decoding.trace import Step, Trace

MAX_NEW_TOKENS_CAP = 4096


class Run:
    """One decoding run, stepped by the caller. Holds the KV cache, so it lives on the server.

    With a `scheduler` (decoding.serving.scheduler.Scheduler) its forward passes ride in the scheduler's ticks,
    batched with other sessions' steps; `alone` asks the scheduler to give them a pass of their own (bit-exact
    with generate()). Sampling always happens here, with this run's own generator."""

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
    ):
        if not (isinstance(max_new_tokens, int) and 1 <= max_new_tokens <= MAX_NEW_TOKENS_CAP):
            raise ValueError(f"max_new_tokens must be an integer in [1, {MAX_NEW_TOKENS_CAP}], got {max_new_tokens!r}")
        if len(prompt.ids) + max_new_tokens > lm.context_length:
            raise ValueError(
                f"prompt ({len(prompt.ids)} tokens) + max_new_tokens ({max_new_tokens}) exceeds "
                f"the context window of {lm.context_length} tokens"
            )
        if not (isinstance(top_n, int) and 1 <= top_n <= 100):
            raise ValueError(f"top_n must be an integer in [1, 100], got {top_n!r}")
        self.lm, self.prompt, self.top_n, self.seed = lm, prompt, top_n, int(seed)
        self.trace = Trace(
            lm.model_id,
            lm.label,
            str(lm.device),
            lm.dtype_name,
            prompt.text,
            list(prompt.ids),
            list(prompt.tokens),
            self.seed,
            max_new_tokens,
            list(stopping.check_stop_strings(stop_strings)),
        )
        self.generator = torch.Generator(device=lm.device).manual_seed(self.seed)
        self.ids = list(prompt.ids)
        self.cache = None
        self.logits = None  # (V,) float32: the distribution the next step chooses from
        self.scheduler, self.alone = scheduler, alone
        self.last_pass, self._phase = Pass(0.0), "prefill"
        self._rng_states = []  # generator state before each step, so Back can replay a draw

    @property
    def done(self) -> bool:
        return self.trace.stop_reason is not None

    @property
    def generated(self) -> list[int]:
        return self.ids[len(self.prompt.ids) :]

    def prefill(self) -> None:
        # 1) prefill: the whole prompt in one pass (or in chunks, beside other sessions' steps)
        self._forward(self.ids, None, 0)
        self.trace.prefill_ms = self.last_pass.ms
        self._phase = "prefill"

    def preview(self, settings: SamplerSettings) -> Processed:
        """The pipeline applied to the pending distribution, without choosing."""
        assert self.logits is not None, "prefill() first, and not after the run is done"
        return process(self.logits, settings, self.ids, self.generated)

    def preview_step(self, settings: SamplerSettings) -> Step:
        """The pending distribution recorded as a Step (token = what greedy would pick), nothing chosen."""
        p = self.preview(settings)
        return self._record(p, int(torch.argmax(p.final)), False, settings, 0.0)

    def step(self, settings: SamplerSettings, force_id: int | None = None) -> Step:
        if self.done:
            raise ValueError(f"the run has stopped ({self.trace.stop_reason}); go back or reset")
        if force_id is not None and not (0 <= force_id < self.lm.vocab_size):
            raise ValueError(f"forced token id must be in [0, {self.lm.vocab_size}), got {force_id}")
        self._rng_states.append(self.generator.get_state())
        # 2) process, 3) select
        with Timer(self.lm.device) as t:
            processed = self.preview(settings)
            chosen = select(processed.final, settings, self.generator) if force_id is None else force_id
        step = self._record(processed, chosen, force_id is not None, settings, t.ms)
        self.ids.append(chosen)
        self.trace.steps.append(step)
        self._update_text_and_stop(chosen)
        # 4) decode: one forward pass on the new token (skipped once the run has stopped)
        if not self.done:
            self._decode(chosen)
        return step

    def _decode(self, token_id: int) -> None:
        self._forward([token_id], self.cache, len(self.ids) - 1)
        self._phase = "decode"

    def _forward(self, ids: list[int], cache, past: int) -> None:
        if self.scheduler is not None:
            self.logits, self.cache, self.last_pass = self.scheduler.forward(ids, cache, past, alone=self.alone)
            return
        with Timer(self.lm.device) as t:
            self.logits, self.cache = forward_one(self.lm, ids, cache, past)
        self.last_pass = Pass(t.ms)

    def back(self) -> None:
        """Undo the last step: trim the KV cache and recompute only the last position's logits."""
        if not self.trace.steps:
            raise ValueError("nothing to go back to: no token has been generated yet")
        self.trace.steps.pop()
        self.ids.pop()
        self.generator.set_state(self._rng_states.pop())
        self.trace.stop_reason = None
        self._update_text(self.generated)
        if not self.trace.steps:
            self.cache = None
            self.prefill()
            return
        # keep the positions before the last token, then recompute it
        rewind(self.cache, len(self.ids) - 1)
        self._decode(self.ids[-1])

    def _update_text_and_stop(self, chosen: int) -> None:
        text = self._update_text(self.generated)
        reason = stopping.stop_reason(chosen, len(self.generated), text, self.lm.eos_ids, self.trace.max_new_tokens)
        if reason is not None:
            self.trace.stop_reason = reason
            self.trace.text, self.trace.held_text = (
                text.visible + (text.held if reason != stopping.STOP_STRING else ""),
                "",
            )
            self.logits = None

    def _update_text(self, generated: list[int]) -> stopping.TextState:
        text = stopping.split_text(
            self.lm.tokenizer.decode(generated, skip_special_tokens=True), tuple(self.trace.stop_strings)
        )
        self.trace.text, self.trace.held_text = text.visible, text.held
        return text

    def _record(self, p: Processed, chosen: int, forced: bool, settings: SamplerSettings, sample_ms: float) -> Step:
        timings = Timings(
            phase=self._phase,
            forward_ms=self.last_pass.ms,
            rows=self.last_pass.rows,
            pass_mode=self.last_pass.mode,
            noise=self.last_pass.noise,
            sample_ms=sample_ms,
            kv_bytes=kv_cache_bytes(self.cache),
            context_len=len(self.ids),
        )
        return record_step(
            p,
            chosen,
            forced=forced,
            settings=settings,
            index=len(self.trace.steps),
            timings=timings,
            tokenizer=self.lm.tokenizer,
            top_n=self.top_n,
        )


def generate_steps(lm: LoadedModel, prompt: Prompt, settings: SamplerSettings, **run_kwargs) -> Iterator[Step]:
    """The loop as a generator: the first `next()` includes the prefill, so it measures time to first token."""
    run = Run(lm, prompt, **run_kwargs)
    run.prefill()
    while not run.done:
        yield run.step(settings)
    return run.trace


def run_to_end(lm: LoadedModel, prompt: Prompt, settings: SamplerSettings, **run_kwargs) -> Trace:
    """`generate_steps` run to the end; its return value is the trace."""
    steps = generate_steps(lm, prompt, settings, **run_kwargs)
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value
