"""The speculative tab's handlers. A `SpecRun` holds KV caches, so the page keeps a short session id and `RUNS`
(a view of the one session store, ui.sessions) maps it to the run. Every forward pass of a round runs inside
`model_turn`, so a class's batched steps go between rounds. A handler takes the session id and the controls' values
by name (`Controls`) and answers with the whole `View`: the session id and the tab's two patched views, the round
and the run (visuals/speculative/views.py), each sending the page only what changed since the last answer."""

import html
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
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
from decoding.watch import Cancelled, Watch
from ui import gpu
from ui.alive import gone
from ui.context import CHAT, AppConfig, get_model, model_turn, pass_turn
from ui.events import PROGRESS, CancelFlags
from ui.patch import Patcher
from ui.sessions import STORE, spec_run_bytes
from ui.speculative import lens
from visuals.glossary import stop_reason
from visuals.speculative import charts as figs
from visuals.speculative import views
from visuals.speculative.captions import round_caption, run_caption, speedup_caption
from visuals.speculative.round import round_html

STOPS = CancelFlags()  # the Stop button beside Run to end: read between two rounds
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
    round: Any  # the round: its chips, its two charts, its words, the text so far, the lens at L
    run: Any  # the run: its words, tokens per round, kept by position, the timing beside plain decoding


@dataclass
class Spec:
    key: Started
    run: SpecRun
    context: list[str]  # the token text of every id in the run so far
    comparison: Comparison | None = None
    round_view: Patcher = field(default_factory=Patcher)  # what the page's round view was last sent
    run_view: Patcher = field(default_factory=Patcher)  # and its run view
    # one session's events never interleave on its run (a Round and a Back at once): each holds it whole
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)


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


@contextmanager
def _start(config: AppConfig, sid, key: Started) -> Iterator[tuple[str, Spec]]:
    """A new prefilled run for the session, held by this event until the block ends."""
    lm = get_model(config)
    run = SpecRun(lm, list(key.ids), key.settings, **_run_options(key))
    with model_turn(lm, LABEL):
        run.prefill()
    sid = sid or uuid.uuid4().hex
    with RUNS.storing(sid, Spec(key, run, token_texts(lm.tokenizer, list(key.ids)))) as spec:
        yield sid, spec


@contextmanager
def _current(config: AppConfig, sid, controls: Controls) -> Iterator[tuple[str, Spec]]:
    """This session's run, or a fresh prefilled one when there is none or a control changed since it began; held by
    this event alone until the block ends."""
    key = _started(config, controls)
    with RUNS.holding(sid) as spec:
        if spec is not None and spec.key == key:
            yield sid, spec
            return
    with _start(config, sid, key) as started:
        yield started


def _round(config: AppConfig, spec: Spec) -> None:
    lm = get_model(config)
    with model_turn(lm, LABEL):  # the draft's passes and the verify pass, between the scheduler's ticks
        spec.run.round()
    spec.context = spec.context[: spec.run.rounds[-1].context_len] + token_texts(
        lm.tokenizer, spec.run.ids[spec.run.rounds[-1].context_len :]
    )


def prefill(config: AppConfig, sid, controls: Controls) -> View:
    RUNS.release(sid)
    with _start(config, sid, _started(config, controls)) as (sid, spec):
        return view(sid, spec, get_model(config))


def step(config: AppConfig, sid, controls: Controls) -> View:
    with _current(config, sid, controls) as (sid, spec):
        _round(config, spec)
        return view(sid, spec, get_model(config))


def run_to_end(config: AppConfig, sid, controls: Controls, progress=PROGRESS, request=None) -> View:
    """The remaining rounds, then plain decoding on the same prompt and settings, timed side by side; the bar says
    the round and how many tokens. Stop (`STOPS`) ends it between two rounds, or two of plain decoding's passes, and
    the run's words say so and how soon after the press reached the server. On ZeroGPU the timing is a GPU call of
    its own: the whole run again, and plain decoding, on the GPU (`race`)."""
    with _current(config, sid, controls) as (sid, spec):
        try:
            return _to_end(config, sid, spec, progress, STOPS.watch(request, progress))
        except Cancelled:
            return view(sid, spec, get_model(config), halted=STOPS.since_pressed(request))


def _to_end(config: AppConfig, sid, spec: Spec, progress, watch: Watch) -> View:
    run, lm = spec.run, get_model(config)
    for _ in drive(run, advance=lambda: _round(config, spec)):
        made, most = len(run.generated), run.max_new
        watch.on_progress(made / most, desc=f"round {len(run.rounds)}: {made} of at most {most} tokens")
        watch.check()
    progress(0.99, desc="plain decoding, for comparison")
    if gpu.ZEROGPU:
        job = gpu.Job(raced, (spec.key,), config, cancel_file=gpu.NO_CANCEL, seconds=GPU_SECONDS)
        spec.comparison = gpu.run(config, job, progress, LABEL)
        return view(sid, spec, lm)
    with model_turn(lm, LABEL):
        plain_watch = Watch(should_stop=watch.should_stop, between_passes=pass_turn(lm), deadline=watch.deadline)
        plain = plain_decode(lm, run.result.prompt_ids, run.settings, run.max_new, spec.key.seed, plain_watch)
    spec.comparison = Comparison(run.result, plain)
    return view(sid, spec, lm)


def raced(lm, key: Started, watch) -> Comparison:
    """The speed-up measured on `lm`'s device (ui.gpu: plain data in and out)."""
    return race(lm, list(key.ids), key.settings, **_run_options(key), watch=watch)


def _run_options(key: Started) -> dict:
    """A SpecRun's options from what the run was started with (the session's run, and the timed one on ZeroGPU)."""
    return dict(source=key.source, draft_tokens=key.k, exit_layer=key.layer, seed=key.seed, max_new_tokens=key.max_new)


def back(config: AppConfig, sid) -> View:
    with RUNS.holding(sid) as spec:
        if spec is None:
            raise ValueError(gone("run", "press Prefill to start one", had=sid is not None))
        spec.run.back()
        spec.context, spec.comparison = spec.context[: len(spec.run.ids)], None  # the timing was of the whole run
        return view(sid, spec, get_model(config))


def reset(sid) -> View:
    RUNS.release(sid)
    return blank()


def blank() -> View:
    """The views before a run: what to press to fill them (whole, not patched: a new run's first answer is whole)."""
    return View(sid=None, round=views.round_view(ROUND_BLANK).html, run=views.run_view([], 1, []).html)


def whole(sid, part: str) -> dict | str:
    """The whole round or run view as last sent, for a page whose copy missed a change (ui/patch.py)."""
    try:
        with RUNS.holding(sid) as spec:
            if spec is not None:
                return getattr(spec, f"{part}_view").resend()
    except ValueError:  # freed: the next click says so
        pass
    return getattr(blank(), part)


def view(sid: str, spec: Spec, lm, halted: float | None = None) -> View:
    """The run as the page shows it: the last round, the run so far and, once run to the end, the timing; each view
    as the changes from what the page was last sent. `halted`: Stop ended a Run to end, this many seconds after the
    press reached the server."""
    run = spec.run
    text = html.escape(lm.tokenizer.decode(run.generated, skip_special_tokens=True)) or "∅"
    written = f"<b>Written so far</b> ({len(run.generated)} of at most {run.max_new} tokens): {text}"
    if run.done:
        written += f"<br><b>Stopped:</b> {stop_reason(run.result.stop_reason)}."
    if halted is not None:
        left = "plain decoding was not timed beside it" if run.done else "press Round or Run to end to go on"
        written += f"<br><b>Stopped by you</b>, {halted:.2f} s after you pressed Stop: {left}."
    if not run.rounds:
        status = f"<b>Prefilled</b> {len(run.result.prompt_ids) - 1} prompt tokens in {run.result.prefill_ms:.0f} ms. "
        status += "Press <b>Round</b>: the draft guesses, the target checks every guess in one pass."
        shown = views.round_view(ROUND_BLANK, status=status, text=written)
    else:
        rnd, layers = run.rounds[-1], (run.draft.layers if run.draft else None)
        shown = views.round_view(
            round_html(spec.context[: rnd.context_len], rnd, layers),
            figs.verify_figure(rnd, run.settings.greedy),
            figs.decisive_figure(rnd),
            round_caption(rnd, run.settings.greedy, layers),
            written,
            *lens.exit_parts(run),
        )
    speed, timeline = "", ""
    if spec.comparison is not None:  # the timed run: the session's own, or on ZeroGPU the same run again on the GPU
        cmp = spec.comparison
        where = f"{cmp.spec.model}, {cmp.spec.dtype} on {cmp.spec.device}"
        plain = cmp.plain
        timeline = figs.timeline_figure(cmp.spec.rounds, cmp.spec.prefill_ms, plain.prefill_ms, plain.token_ms)
        speed = speedup_caption(cmp.to_dict(), where)
    caption = run_caption(summary(run.rounds), "")
    by_pos = acceptance_by_position(run.rounds, run.k)
    whole_run = views.run_view(run.rounds, run.k, by_pos, caption, speed, timeline)
    return View(sid=sid, round=spec.round_view.send(shown), run=spec.run_view.send(whole_run))
