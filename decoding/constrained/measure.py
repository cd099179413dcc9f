"""The lesson's measurement: the same prompt sampled N times, seeded, without and then with the constraint.

For each answer: does it parse and validate (checks.check_output), and its log-probability under the model (one
scoring pass over the whole answer, however it was made, against the prompt's cache). For the constrained runs: what
each grammar mask cost beside the forward pass that produced the distribution, and how many tokens the grammar
forced. The prompt is computed once: every sample starts from a copy of its cache (`decoding.loop.prefill_once`),
what its own prefill would have computed.
"""

import statistics
from dataclasses import dataclass, field

from decoding.beams.scoring import score_after
from decoding.constrained.checks import check_output
from decoding.constrained.kinds import Constraint
from decoding.constrained.matcher import GrammarState
from decoding.constrained.run import ConstrainedRun, calls_saved
from decoding.loop import Prefilled, Run, prefill_once
from decoding.pipeline import SamplerSettings
from decoding.prompts import Prompt
from decoding.trace import Trace
from decoding.watch import Cancelled, Watch

MAX_SAMPLES = 50


@dataclass(frozen=True)
class Sample:
    seed: int
    text: str
    problem: str | None  # why it does not validate; None when it does
    logprob: float  # the answer's log-probability under the model (end-of-sequence token included)
    tokens: int
    forced: int  # tokens the grammar forced (fast-forward)
    stop_reason: str

    @property
    def valid(self) -> bool:
        return self.problem is None


@dataclass
class Comparison:
    constraint: Constraint
    settings: SamplerSettings
    unconstrained: list[Sample] = field(default_factory=list)
    constrained: list[Sample] = field(default_factory=list)
    mask_ms: list[float] = field(default_factory=list)  # every sampled constrained step's mask
    forward_ms: list[float] = field(default_factory=list)  # every decode pass of both halves: the cost beside it
    calls_saved: int = 0  # forward passes fast-forward saved over the constrained runs
    cancelled: bool = False  # stopped early: the samples so far

    @property
    def mask_ms_p50(self) -> float:
        return statistics.median(self.mask_ms) if self.mask_ms else 0.0

    @property
    def forward_ms_p50(self) -> float:
        return statistics.median(self.forward_ms) if self.forward_ms else 0.0

    @property
    def forced_share(self) -> float:
        tokens = sum(s.tokens for s in self.constrained)
        return sum(s.forced for s in self.constrained) / tokens if tokens else 0.0


def validator(lm, constraint: Constraint):
    """check_output for this constraint, with a fresh matcher for Lark answers (their only parser here)."""

    def parses(text: str) -> bool:
        grammar = GrammarState(constraint, lm.tokenizer, lm.vocab_size)
        tokens = lm.tokenizer(text, add_special_tokens=False).input_ids
        return grammar.matcher.consume_tokens(tokens) and grammar.accepting

    return lambda text: check_output(constraint, text, parses)


def compare(
    lm,
    prompt: Prompt,
    constraint: Constraint,
    settings: SamplerSettings,
    *,
    n: int = 20,
    seed: int = 0,
    max_new_tokens: int = 48,
    watch: Watch | None = None,
) -> Comparison:
    """N seeded samples (seeds seed .. seed + n - 1) without the constraint, then the same seeds with it."""
    if not (isinstance(n, int) and 1 <= n <= MAX_SAMPLES):
        raise ValueError(f"the number of samples must be an integer in [1, {MAX_SAMPLES}], got {n!r}")
    watch, check = watch or Watch(), validator(lm, constraint)
    result = Comparison(constraint, settings)
    try:
        watch.check()
        shared = prefill_once(lm, prompt.ids)  # every sample's prompt: one pass, each run starts from a copy
        for i in range(2 * n):
            half = "with" if i >= n else "without"
            watch.on_progress(i / (2 * n), f"{half} the constraint: sample {i % n + 1} of {n}")
            _one(lm, prompt, constraint, settings, result, i >= n, seed + i % n, max_new_tokens, watch, check, shared)
    except Cancelled:
        result.cancelled = True
    return result


def _one(lm, prompt, constraint, settings, result: Comparison, constrained, seed, max_new_tokens, watch, check, shared):
    kwargs = dict(seed=seed, max_new_tokens=max_new_tokens, top_n=1)
    run = ConstrainedRun(lm, prompt, constraint, **kwargs) if constrained else Run(lm, prompt, **kwargs)
    trace = _to_end(run, settings, watch, shared)
    sample = _sample(lm, shared, trace, check)
    (result.constrained if constrained else result.unconstrained).append(sample)
    # one token's forward pass (a choice like yes/no may need none after the prompt's: the free runs have them)
    result.forward_ms += [st.forward_ms for st in trace.steps if st.phase == "decode"]
    if constrained:
        result.mask_ms += [st.mask_ms for st in trace.steps if not st.grammar_forced]
        result.calls_saved += calls_saved(trace)


def _to_end(run: Run, settings: SamplerSettings, watch: Watch, shared: Prefilled) -> Trace:
    watch.check()
    run.prefill(shared)
    while not run.done:
        watch.check()
        run.step(settings)
    return run.trace


def _sample(lm, shared: Prefilled, trace: Trace, check) -> Sample:
    scored = score_after(lm, shared, trace.token_ids)
    forced = sum(st.grammar_forced for st in trace.steps)
    problem = check(trace.text)
    return Sample(
        seed=trace.seed,
        text=trace.text,
        problem=problem,
        logprob=scored.logprob,
        tokens=len(trace.steps),
        forced=forced,
        stop_reason=trace.stop_reason,
    )
