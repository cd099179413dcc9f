"""The repetition experiment: one prompt, several settings, the same seed for each, every run measured.

Greedy decoding picks the most likely token every time; once a phrase has been written, writing it
again is often the most likely continuation, and the model falls into a loop. Sampling and the penalties
break loops; a large repetition penalty also stops the model from repeating words it *should* repeat
(names, variables, list markers). The metrics (`decoding.beams.repeats`) work on token ids, the text only
at the edges.
"""

import os
import time
from dataclasses import dataclass, field

from decoding.beams.repeats import find_loop, repeated_mask, repeated_ngram_share, reuse_share, word_counts
from decoding.loop import Run
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.serving.ragged import feed_together
from decoding.watch import Cancelled, Watch

NGRAM_SIZES = (3, 4)
LOOP_MIN = 4  # a loop is a back-to-back repeat of at least this many tokens
TOKENS_RANGE = (20, 400)
# enough for a loop to come round several times: on the bundled model greedy loops on the panel's song from token 50,
# every 17 tokens (docs/measurements/beams.md); six settings × 100 tokens side by side take about 15 s on two CPU
# cores, where 150 tokens one setting after another took a minute of a class's time to show the same loop
DEFAULT_TOKENS = 100
SEEDS_RANGE = (1, 5)


@dataclass(frozen=True)
class Setting:
    label: str
    settings: SamplerSettings

    @property
    def sampled(self) -> bool:
        return not self.settings.greedy


SETTINGS = {
    "greedy": Setting("greedy", SamplerSettings(temperature=0)),
    "temperature": Setting("temperature 1.0", SamplerSettings(temperature=1.0)),
    "top_p": Setting("top-p 0.9", SamplerSettings(temperature=1.0, top_p=0.9)),
    "repetition": Setting("repetition 1.3", SamplerSettings(temperature=0, repetition_penalty=1.3)),
    "presence": Setting("presence 1.0", SamplerSettings(temperature=0, presence_penalty=1.0)),
    "frequency": Setting("frequency 1.0", SamplerSettings(temperature=0, frequency_penalty=1.0)),
    "repetition_big": Setting("repetition 2.0", SamplerSettings(temperature=0, repetition_penalty=2.0)),
}
DEFAULT_SETTINGS = ("greedy", "temperature", "top_p", "repetition", "presence", "repetition_big")


@dataclass
class RunResult:
    """One generation: its ids, each token's text (for highlighting) and why it stopped."""

    seed: int
    ids: list[int]
    tokens: list[str]
    text: str
    stop_reason: str | None


@dataclass
class RepetitionExperiment:
    message: str
    prompt_ids: list[int]
    max_new_tokens: int
    seeds: list[int]
    must_repeat: tuple[str, ...]
    runs: dict[str, list[RunResult]] = field(default_factory=dict)  # setting key -> one run per seed
    seconds: float = 0.0
    cancelled: bool = False

    def summaries(self) -> list[dict]:
        """One plain row per finished setting (the first run's text; rates averaged over its runs)."""
        return [_summary(key, runs, self) for key, runs in self.runs.items() if runs]


def _summary(key: str, runs: list[RunResult], exp: RepetitionExperiment) -> dict:
    first, loops = runs[0], [find_loop(r.ids, LOOP_MIN) for r in runs]
    rates = {n: [repeated_ngram_share(r.ids, n) for r in runs] for n in NGRAM_SIZES}
    return {
        "key": key,
        "label": SETTINGS[key].label,
        "sampled": SETTINGS[key].sampled,
        "runs": len(runs),
        **{f"rep{n}": sum(v) / len(v) for n, v in rates.items()},
        **{f"rep{n}_range": (min(v), max(v)) for n, v in rates.items()},
        "loop": loops[0],
        "looped_runs": sum(lp is not None for lp in loops),
        "reuse": sum(reuse_share(r.ids, exp.prompt_ids) for r in runs) / len(runs),
        "words": word_counts(first.text, list(exp.must_repeat)),
        "tokens": first.tokens,
        "mask": repeated_mask(first.ids, LOOP_MIN),
        "stop_reason": first.stop_reason,
    }


def run_repetition_experiment(
    lm: LoadedModel,
    message: str,
    keys=DEFAULT_SETTINGS,
    *,
    max_new_tokens: int = DEFAULT_TOKENS,
    seed: int = 0,
    n_seeds: int = 1,
    chat: bool = True,
    must_repeat=(),
    watch: Watch | None = None,
) -> RepetitionExperiment:
    """Generate from `message` with each setting in `keys`, stopping only at EOS or max_new_tokens.
    Every setting uses the same seed; sampled settings also run seeds seed+1 ... seed+n_seeds-1
    (greedy ones run once: argmax ignores the seed).

    The runs go side by side, one token each per packed pass (`decoding.serving.ragged.feed_together`): the weights
    are read once for all of them, and a token may differ from a run alone by float noise. Each run prefills alone
    and samples with its own seeded generator. A cancel keeps every run's tokens so far: all of the same length."""
    _check_experiment(keys, max_new_tokens, n_seeds)
    watch = watch or Watch()
    prompt = encode_prompt(lm.tokenizer, message, chat, lm.context_length)
    seeds = [seed + i for i in range(n_seeds)]
    plan = [(k, s) for k in keys for s in (seeds if SETTINGS[k].sampled else seeds[:1])]
    exp = RepetitionExperiment(
        message=message,
        prompt_ids=list(prompt.ids),
        max_new_tokens=max_new_tokens,
        seeds=seeds,
        must_repeat=tuple(must_repeat),
    )
    start = time.perf_counter()
    # top_n=1: the experiment needs only the chosen token of each step, not the candidates
    runs = [Run(lm, prompt, seed=s, max_new_tokens=max_new_tokens, top_n=1) for _, s in plan]
    try:
        for k, run in enumerate(runs):
            watch.check()
            watch.on_progress(0.0, f"prefill {k + 1} of {len(runs)}")
            run.prefill()
        for step in range(max_new_tokens):
            watch.check()
            said = f"{len(runs)} runs side by side: token {step + 1} of {max_new_tokens}"
            watch.on_progress(step / max_new_tokens, said)
            going = [(run, SETTINGS[key].settings) for run, (key, _) in zip(runs, plan) if not run.done]
            if not going:
                break
            for run, settings in going:
                run.step(settings, feed=False)
            feed_together(lm, [run for run, _ in going])
    except Cancelled:
        exp.cancelled = True
    if any(run.generated for run in runs):  # a cancel during the prefills leaves nothing to compare
        for (key, s), run in zip(plan, runs):
            exp.runs.setdefault(key, []).append(_result(lm, run, s))
    exp.seconds = time.perf_counter() - start
    return exp


def _result(lm: LoadedModel, run: Run, seed: int) -> RunResult:
    # the end-of-sequence token is not part of the text; leave it out of the metrics too
    ids = run.generated[:-1] if run.trace.stop_reason == "eos" else run.generated
    return RunResult(
        seed=seed,
        ids=ids,
        tokens=token_pieces(lm.tokenizer, ids),
        text=run.trace.text,
        stop_reason=run.trace.stop_reason,
    )


def token_pieces(tokenizer, ids: list[int]) -> list[str]:
    """Each token's share of the decoded text. Decoding one token alone breaks characters that span
    several tokens (emoji, most non-Latin scripts) into '\ufffd'; here such a token gets '' and the
    character goes to the token that completes it."""
    pieces, shown = [], ""
    for i in range(len(ids)):
        text = tokenizer.decode(ids[: i + 1], skip_special_tokens=True)
        if text.endswith("\ufffd"):  # an unfinished character: the token that completes it shows it
            pieces.append("")
            continue
        pieces.append(text[len(os.path.commonprefix([text, shown])) :])
        shown = text
    return pieces


def _check_experiment(keys, max_new_tokens, n_seeds) -> None:
    unknown = [k for k in keys if k not in SETTINGS]
    if not keys or unknown:
        raise ValueError(f"settings must be a non-empty selection of {', '.join(SETTINGS)}; got {list(keys)!r}")
    low, high = TOKENS_RANGE
    if not (isinstance(max_new_tokens, int) and low <= max_new_tokens <= high):
        raise ValueError(f"tokens per setting must be an integer in [{low}, {high}], got {max_new_tokens!r}")
    low, high = SEEDS_RANGE
    if not (isinstance(n_seeds, int) and low <= n_seeds <= high):
        raise ValueError(f"seeds must be an integer in [{low}, {high}], got {n_seeds!r}")
