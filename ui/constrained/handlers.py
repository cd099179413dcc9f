"""The constrained tab's handlers: check the browser's values, call decoding.constrained, draw with
visuals.constrained.views, return.

The page keeps only a run id; the run (its KV cache and its grammar matcher) lives in `sessions.STORE` with every
other live run, under the same caps. Its steps ride the shared scheduler's ticks like the Step tab's; the
N-samples measurement takes its turn on the model between ticks. A handler takes the run id and the controls'
values by name (`Controls`) and answers a `View` (the N-samples measurement is ui/constrained/measure.py): the run
id, the step's view (one element the page patches: its words, the answer, the chart, the mask rows; a Step sends what
changed, ui/patch.py) and the engines' table. A ValueError names the bad value and is said on the page; the session's
run is untouched by it.
"""

import html
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

from decoding import values
from decoding.constrained.kinds import KIND_LABELS, Constraint
from decoding.constrained.run import ConstrainedRun, calls_saved
from decoding.knobs import check_seed, settings_from
from decoding.loop import drive
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings
from decoding.prompts import Prompt, encode_prompt
from ui.context import AppConfig, get_model, scheduler_for
from ui.events import PROGRESS, deadline, paced
from ui.patch import Patcher
from ui.sessions import STORE, Entry
from visuals.chart import empty_html
from visuals.constrained import views as draw
from visuals.glossary import stop_reason, term
from visuals.words import count

KINDS = {label: kind for kind, label in KIND_LABELS.items()}  # the radio shows labels
MAX_NEW_UI = 96
CHART_BLANK = "Press Step: the grammar's mask joins the sampler's stages"
ALL_FORCED = "Every token so far was forced by the grammar: nothing was sampled, so no distribution to draw"


@dataclass(frozen=True)
class Controls:
    """What the controls hold, as the browser sent it (checked by `started` and `settings_from`)."""

    prompt: Any  # one chat turn
    kind: Any  # the constraint kind, as labelled
    text: Any  # the grammar
    seed: Any
    max_new: Any
    fast_forward: Any
    knobs: Mapping[str, Any]  # SamplerSettings field -> value, for decoding.knobs.settings_from


class View(NamedTuple):
    """The run's outputs by name: a handler's answer, and (holding components) the page's outputs."""

    run_id: Any
    shown: Any  # the step: its words, the answer's chips, the last sampled step's stages and its mask rows
    orders: Any  # what each engine's order would do next


class Started(NamedTuple):
    """What a run is started with, checked: a change in any of it starts a new run."""

    lm: LoadedModel
    prompt: Prompt
    constraint: Constraint
    seed: int
    max_new: int
    fast_forward: bool

    def key(self) -> tuple:
        return (self.lm.model_id, tuple(self.prompt.ids), self.constraint, self.seed, self.max_new, self.fast_forward)


def started(config: AppConfig, controls: Controls) -> Started:
    lm = get_model(config)
    return Started(
        lm=lm,
        constraint=Constraint(KINDS[values.choice("Constraint", controls.kind, list(KINDS))], controls.text),
        prompt=encode_prompt(lm.tokenizer, controls.prompt, chat=lm.chat, context_length=lm.context_length),
        seed=check_seed(controls.seed),
        max_new=values.whole("Max new tokens", controls.max_new, 1, MAX_NEW_UI),
        fast_forward=bool(controls.fast_forward),
    )


def _started_with(run: ConstrainedRun) -> Started:
    return Started(
        lm=run.lm,
        prompt=run.prompt,
        constraint=run.grammar.constraint,
        seed=run.seed,
        max_new=run.trace.max_new_tokens,
        fast_forward=run.fast_forward,
    )


def sampler_settings(config: AppConfig, controls: Controls) -> SamplerSettings:
    return settings_from(controls.knobs, vocab_size=get_model(config).vocab_size)


@contextmanager
def _run(config: AppConfig, run_id, controls: Controls) -> Iterator[tuple[str, ConstrainedRun]]:
    """This session's run, or a new one (prefilled) when there is none or what it was started with changed; held by
    this event alone until the block ends (its entry's lock, as a Step holds its run)."""
    s = started(config, controls)
    with _held(run_id) as entry:
        if entry is not None and isinstance(entry.run, ConstrainedRun) and _started_with(entry.run).key() == s.key():
            yield run_id, entry.run
            return
    run = ConstrainedRun(
        s.lm,
        s.prompt,
        s.constraint,
        fast_forward=s.fast_forward,
        seed=s.seed,
        max_new_tokens=s.max_new,
        top_n=20,
        scheduler=scheduler_for(s.lm),
    )
    run.prefill()
    # the entry's view: what the page's step view was last sent (a new run's first answer is whole)
    entry = Entry(trace=run.trace, run=run, view=Patcher())
    with entry.lock:  # held before the store lets another event find it
        yield STORE.put(entry, replace=run_id), run


def _entry(run_id) -> Entry | None:
    try:
        return STORE.get(run_id) if run_id else None
    except ValueError:  # expired: a new run starts
        return None


@contextmanager
def _held(run_id) -> Iterator[Entry | None]:
    """The session's entry (`_entry`), held by this event alone until the block ends."""
    entry = _entry(run_id)
    if entry is None:
        yield None
        return
    with entry.lock:
        yield entry


def _advance(run: ConstrainedRun, settings: SamplerSettings, force_id=None) -> None:
    """One decision: a sampled (or your) token, then every token the grammar forces after it."""
    run.step(settings, force_id)
    while not run.done and run.forced():
        run.step(settings)


def step(config: AppConfig, run_id, controls: Controls) -> View:
    settings = sampler_settings(config, controls)
    with _run(config, run_id, controls) as (run_id, run):
        if run.done:
            raise ValueError(f"the run has stopped ({run.trace.stop_reason}): press Back, or Reset for a new one")
        _advance(run, settings)
        return view(run_id, run, settings)


def run_to_end(config: AppConfig, run_id, controls: Controls, progress=PROGRESS) -> View:
    settings = sampler_settings(config, controls)
    with _run(config, run_id, controls) as (run_id, run):
        report = paced(progress)
        for _ in drive(run, advance=lambda: _advance(run, settings), deadline=deadline()):
            report((len(run.trace.steps), run.trace.max_new_tokens), desc="constrained decoding")
        return view(run_id, run, settings)


def force(config: AppConfig, run_id, controls: Controls, token) -> View:
    """Your token instead of the pipeline's: one token of the vocabulary, refused (naming the legal ones) if the
    grammar does not allow it here."""
    settings = sampler_settings(config, controls)
    with _run(config, run_id, controls) as (run_id, run):
        if not isinstance(token, str) or token == "":
            raise ValueError("type the token to force (for example yes, or {), then press Force")
        ids = run.lm.tokenizer(token, add_special_tokens=False).input_ids
        if len(ids) != 1:
            raise ValueError(f"{token!r} is {len(ids)} tokens for this tokenizer; type one token")
        if run.done:
            raise ValueError(f"the run has stopped ({run.trace.stop_reason}): press Back first")
        _advance(run, settings, force_id=ids[0])
        return view(run_id, run, settings)


def back(run_id, controls: Controls) -> View:
    """Undo the last decision: the forced tokens after it, then it; the matcher rolls back with the run."""
    with _held(run_id) as entry:
        if entry is None or not entry.run.trace.steps:  # this tab has no Prefill: Step starts a run
            raise ValueError("nothing to go back to: no token has been generated yet (press Step to start)")
        run = entry.run
        settings = settings_from(controls.knobs, vocab_size=run.lm.vocab_size)
        while run.trace.steps and run.trace.steps[-1].grammar_forced:
            run.back()
        if run.trace.steps:
            run.back()
        return view(run_id, run, settings)


def reset(run_id) -> View:
    STORE.release(run_id)
    return blank()


def blank() -> View:
    """The tab before a run, whole."""
    return View(run_id=None, shown=draw.step_view("", [], "", empty_html(CHART_BLANK, 360), "").html, orders="")


def whole(run_id) -> dict | str:
    """The whole step view as last sent, for a page whose copy missed a change (ui/patch.py)."""
    with _held(run_id) as entry:
        return entry.view.resend() if entry is not None and isinstance(entry.view, Patcher) else blank().shown


def view(run_id, run: ConstrainedRun, settings: SamplerSettings) -> View:
    """The run as the page shows it: its tokens, the last sampled step's chart and mask rows, each order's next."""
    steps = run.trace.steps
    chosen = [s for s in steps if not s.grammar_forced]  # sampled, or typed by you: each has a distribution
    status = (
        f"<b>{count(len(steps), 'token')}</b>: {draw.token_origins(steps)}; {term('fast-forward')} "
        f"saved <b>{count(calls_saved(run.trace), 'forward pass', 'forward passes')}</b> · "
        f"{html.escape(run.grammar.constraint.label)} · {'complete' if run.grammar.accepting else 'not complete yet'}"
    )
    if run.done:
        status += f" · <b>stopped</b>: {stop_reason(run.trace.stop_reason)}"
    decode = run.lm.tokenizer.decode
    shown = chosen[-1] if chosen else steps[-1] if steps else None
    rows = draw.mask_rows_html(shown, run.lm.vocab_size, lambda i: decode([i])) if shown else ""
    rows += draw.forced_after(steps[shown.index + 1 :]) if shown else ""
    blank_chart = ALL_FORCED if steps else CHART_BLANK
    chart = draw.step_chart(chosen[-1]) if chosen else empty_html(blank_chart, 360)
    parts = draw.step_view(status, steps, run.trace.held_text, chart, rows)
    entry = _entry(run_id)
    sent = entry.view.send(parts) if entry is not None and isinstance(entry.view, Patcher) else parts.html
    return View(run_id=run_id, shown=sent, orders=orders(run, settings))


def orders(run: ConstrainedRun, settings: SamplerSettings) -> str:
    """What each engine's order would do with the next token's distribution, under the current settings."""
    outcomes = run.outcomes(settings)
    if not outcomes:
        return "<p><i>The next tokens are forced, or the run is done: no engine samples here.</i></p>"
    note = f"temperature {settings.temperature:g}, top-k {settings.top_k}, top-p {settings.top_p:g}"
    return draw.orders_html(outcomes, note, position=len(run.trace.steps) + 1)


def orders_now(config: AppConfig, run_id, controls: Controls) -> str:
    """The engine table again after a knob changed (no forward pass: the next token's logits are kept)."""
    with _held(run_id) as entry:
        if entry is None or not isinstance(entry.run, ConstrainedRun):
            return ""
        return orders(entry.run, sampler_settings(config, controls))
