"""The speculative tab's handlers. A `SpecRun` holds KV caches, so the page keeps a short session id and `RUNS`
(a view of the one session store, ui.sessions) maps it to the run. Every forward pass of a round runs inside
`model_turn`, so a class's batched steps go between rounds. A handler takes the session id and the controls' values
by name (`Controls`) and answers with the whole `View`."""

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from decoding import values
from decoding.knobs import check_seed, settings_from
from decoding.loop import drive
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt, token_texts
from decoding.speculative.baseline import Comparison, plain_decode, race
from decoding.speculative.drafts import layer_count
from decoding.speculative.records import EARLY_EXIT, PROMPT_LOOKUP, acceptance_by_position, summary
from decoding.speculative.run import SpecRun
from decoding.watch import Watch
from ui import gpu
from ui.context import CHAT, AppConfig, get_model, model_turn, pass_turn
from ui.events import PROGRESS, paced
from ui.sessions import STORE, spec_run_bytes
from visuals.glossary import stop_reason
from visuals.speculative import charts as figs
from visuals.speculative.captions import round_caption, run_caption, speedup_caption
from visuals.speculative.round import round_html
from visuals.theme import empty_figure

SOURCES = {"prompt lookup": PROMPT_LOOKUP, "early exit (first L layers)": EARLY_EXIT}
MAX_K_UI, MAX_NEW_UI, LABEL = 12, 160, "speculative decoding"
GPU_SECONDS = 60  # ZeroGPU's estimate for the speed-up: 160 tokens at most, twice
MAX_PROMPT_TOKENS = 2048  # a run's caches stay under ~100 MiB (the bundled model: 45 KiB per token in float32)
K_LABEL, LAYER_LABEL = f"Draft tokens K (1-{MAX_K_UI})", "Exit layer L (early exit)"  # as the boxes are labelled
ROUND_BLANK = "<p class='speculative-gap'>Press <b>Prefill</b>, then <b>Round</b>: the guesses appear here.</p>"


@dataclass(frozen=True)
class Controls:
    """What the controls hold, as the browser sent it (checked by `_started`)."""

    prompt: Any
    template: Any
    source: Any
    k: Any  # draft tokens K
    layer: Any  # exit layer L, read only for early exit
    max_new: Any
    seed: Any
    knobs: Mapping[str, Any]  # SamplerSettings field -> value, for decoding.knobs.settings_from


class Started(NamedTuple):
    """What a run was started with, checked: a change in any of it starts a new run."""

    model_id: str
    ids: tuple[int, ...]
    source: str
    k: int
    layer: int | None
    max_new: int
    settings: SamplerSettings
    seed: int


class View(NamedTuple):
    """The tab's outputs by name: a handler's answer, and (holding components) the page's outputs."""

    sid: Any  # the session id the page keeps
    status: Any
    chips: Any  # the round: context, guesses, verdicts
    verify: Any  # each guess judged by the target
    decisive: Any  # the distribution that decided the round
    run_fig: Any  # tokens per round over the run
    run_md: Any
    timeline: Any  # speculative beside plain decoding, in time
    speed: Any
    written: Any  # the text so far


@dataclass
class Spec:
    key: Started
    run: SpecRun
    context: list[str]  # the token text of every id in the run so far
    comparison: Comparison | None = None


RUNS = STORE.kind(
    "speculative run",
    bytes_of=lambda spec: spec_run_bytes(spec.run),
    again="press Prefill",
    smaller="use a shorter prompt or fewer max new tokens",
)


def release_spec(sid: str | None) -> None:
    """gr.State's delete_callback: a plain function, so gradio's config copy never deep-copies the runs."""
    RUNS.release(sid)


def _prompt_ids(lm, controls: Controls) -> tuple[int, ...]:
    ids = encode_prompt(lm.tokenizer, controls.prompt, controls.template == CHAT, lm.context_length).ids
    if len(ids) > MAX_PROMPT_TOKENS:
        raise ValueError(f"the prompt is {len(ids):,} tokens; this tab takes up to {MAX_PROMPT_TOKENS:,}")
    return tuple(ids)


def _started(config: AppConfig, controls: Controls) -> Started:
    """The controls checked, in the order given here; a ValueError names the first bad one."""
    lm = get_model(config)
    source = SOURCES.get(values.choice("Draft", controls.source, list(SOURCES)))
    layers = layer_count(lm)
    return Started(
        model_id=lm.model_id,
        source=source,
        k=values.whole(K_LABEL, controls.k, 1, MAX_K_UI),
        layer=values.whole(LAYER_LABEL, controls.layer, 1, layers - 1, f"the model has {layers} layers")
        if source == EARLY_EXIT
        else None,
        max_new=values.whole("Max new tokens", controls.max_new, 1, MAX_NEW_UI),
        seed=check_seed(controls.seed),
        settings=settings_from(controls.knobs, vocab_size=lm.vocab_size),
        ids=_prompt_ids(lm, controls),
    )


def _start(config: AppConfig, sid, key: Started) -> tuple[str, Spec]:
    lm = get_model(config)
    run = SpecRun(lm, list(key.ids), key.settings, **_run_options(key))
    with model_turn(lm, LABEL):
        run.prefill()
    sid = sid or uuid.uuid4().hex
    spec = Spec(key, run, token_texts(lm.tokenizer, list(key.ids)))
    RUNS.put(sid, spec)
    return sid, spec


def _current(config: AppConfig, sid, controls: Controls) -> tuple[str, Spec]:
    """This session's run, or a fresh prefilled one when there is none or a control changed since it began."""
    key = _started(config, controls)
    spec = RUNS.get(sid)
    if spec is None or spec.key != key:
        return _start(config, sid, key)
    return sid, spec


def _round(config: AppConfig, spec: Spec) -> None:
    lm = get_model(config)
    with model_turn(lm, LABEL):  # the draft's passes and the verify pass, between the scheduler's ticks
        spec.run.round()
    spec.context = spec.context[: spec.run.rounds[-1].context_len] + token_texts(
        lm.tokenizer, spec.run.ids[spec.run.rounds[-1].context_len :]
    )


def prefill(config: AppConfig, sid, controls: Controls) -> View:
    RUNS.release(sid)
    sid, spec = _start(config, sid, _started(config, controls))
    return view(sid, spec, get_model(config))


def step(config: AppConfig, sid, controls: Controls) -> View:
    sid, spec = _current(config, sid, controls)
    _round(config, spec)
    return view(sid, spec, get_model(config))


def run_to_end(config: AppConfig, sid, controls: Controls, progress=PROGRESS) -> View:
    """The remaining rounds, then plain decoding on the same prompt and settings, timed side by side. On ZeroGPU
    the timing is a GPU call of its own: the whole run again, and plain decoding, on the GPU (`race`)."""
    sid, spec = _current(config, sid, controls)
    run, lm, report = spec.run, get_model(config), paced(progress)
    for _ in drive(run, advance=lambda: _round(config, spec)):
        report((len(run.generated), run.max_new), desc=f"round {len(run.rounds) + 1}")
    progress(0.99, desc="plain decoding, for comparison")
    if gpu.ZEROGPU:
        job = gpu.Job(raced, (spec.key,), config, cancel_file=gpu.NO_CANCEL, seconds=GPU_SECONDS)
        spec.comparison = gpu.run(config, job, progress, LABEL)
        return view(sid, spec, lm)
    with model_turn(lm, LABEL):
        watch = Watch(between_passes=pass_turn(lm))
        plain = plain_decode(lm, run.result.prompt_ids, run.settings, run.max_new, spec.key.seed, watch)
    spec.comparison = Comparison(run.result, plain)
    return view(sid, spec, lm)


def raced(lm, key: Started, watch) -> Comparison:
    """The speed-up measured on `lm`'s device (ui.gpu: plain data in and out)."""
    return race(lm, list(key.ids), key.settings, **_run_options(key), watch=watch)


def _run_options(key: Started) -> dict:
    """A SpecRun's options from what the run was started with (the session's run, and the timed one on ZeroGPU)."""
    return dict(source=key.source, draft_tokens=key.k, exit_layer=key.layer, seed=key.seed, max_new_tokens=key.max_new)


def back(config: AppConfig, sid) -> View:
    spec = RUNS.get(sid)
    if spec is None:
        raise ValueError("there is no run in this session: press Prefill to start one")
    spec.run.back()
    spec.context, spec.comparison = spec.context[: len(spec.run.ids)], None  # the timing was of the whole run
    return view(sid, spec, get_model(config))


def reset(sid) -> View:
    RUNS.release(sid)
    return blank()


def blank() -> View:
    return View(
        sid=None,
        status="",
        chips=ROUND_BLANK,
        verify=empty_figure("Each guess, judged by the target,<br>appears here", 400),
        decisive=empty_figure("The distribution that decided<br>the round appears here", 400),
        run_fig=figs.run_figure([], 1, []),
        run_md="",
        timeline=figs.timeline_figure([], 0, 0, []),
        speed="",
        written="",
    )


def view(sid: str, spec: Spec, lm) -> View:
    """The run as the page shows it: the last round, the run so far and, once run to the end, the timing."""
    run = spec.run
    text = lm.tokenizer.decode(run.generated, skip_special_tokens=True)
    written = f"**Written so far** ({len(run.generated)} of at most {run.max_new} tokens): {text or '∅'}"
    if run.done:
        written += f"  \n**Stopped:** {stop_reason(run.result.stop_reason)}."
    by_pos = acceptance_by_position(run.rounds, run.k)
    shown = blank()._replace(
        sid=sid,
        run_fig=figs.run_figure(run.rounds, run.k, by_pos),
        run_md=run_caption(summary(run.rounds), ""),
        written=written,
    )
    if not run.rounds:
        status = f"**Prefilled** {len(run.result.prompt_ids) - 1} prompt tokens in {run.result.prefill_ms:.0f} ms. "
        status += "Press **Round**: the draft guesses, the target checks every guess in one pass."
        return shown._replace(status=status)
    rnd, layers = run.rounds[-1], (run.draft.layers if run.draft else None)
    shown = shown._replace(
        status=round_caption(rnd, run.settings.greedy, layers),
        chips=round_html(spec.context[: rnd.context_len], rnd, layers),
        verify=figs.verify_figure(rnd, run.settings.greedy),
        decisive=figs.decisive_figure(rnd),
    )
    if spec.comparison is None:
        return shown
    # the timed run: the session's own, or on ZeroGPU the same run again on the GPU
    cmp = spec.comparison
    where = f"{cmp.spec.model}, {cmp.spec.dtype} on {cmp.spec.device}"
    return shown._replace(
        timeline=figs.timeline_figure(cmp.spec.rounds, cmp.spec.prefill_ms, cmp.plain.prefill_ms, cmp.plain.token_ms),
        speed=speedup_caption(cmp.to_dict(), where),
    )
