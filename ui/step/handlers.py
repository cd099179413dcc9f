"""The step tab's handlers: each checks the browser's values, calls decoding (a `Run`), and returns the `Answer` that
`ui.step.view.view` draws from it.

The page keeps only a run id (`gr.State`); the run itself, with its KV cache, lives in `sessions.STORE`, and what
the tab shows of it in the entry's `StepView`. Each handler holds the session's entry for its whole work
(`STORE.holding`), so two events of one page never interleave on its run. The sampler knobs arrive as one mapping,
their values by the `SamplerSettings` field each sets, and become settings through `decoding.knobs.settings_from`;
`strategies_open` and `on_screen` say which costly panels the page shows (`ui.step.view.panels`).
A ValueError raised here names the bad value; `ui.events.teach` shows it in the browser.
"""

import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import gradio as gr

from decoding import values
from decoding.inspector import inspect_step
from decoding.knobs import check_seed, settings_from
from decoding.loop import MAX_NEW_TOKENS_CAP, Run, check_fits, drive
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.stages import FREQUENCY, MIN_P, PRESENCE, REPETITION, TOP_K, TOP_P
from decoding.static import static_kind
from decoding.trace import Trace
from decoding.watch import Cancelled
from ui import validate
from ui.context import CHAT, AppConfig, get_model, scheduler_for
from ui.events import CancelFlags, deadline
from ui.sessions import STORE, Entry, run_need
from ui.step import lens, page_state, reading
from ui.step import view as shown_view
from ui.step.controls import PATH_CHOICES, Reads, Setup, opens_more
from ui.step.lessons import PRESETS
from ui.step.view import TOP_N, Answer, Started, StepRecord, StepView, empty_view, start_line, view
from visuals import distribution
from visuals.chart import empty_html
from visuals.glossary import term
from visuals.step import sequence

QUIET = {"show_progress": "hidden", "concurrency_limit": None}  # events that never touch the model
TRUNCATIONS = (TOP_K, TOP_P, MIN_P)  # the step tab's; greedy skips them
PENALTIES = (REPETITION, PRESENCE, FREQUENCY)  # named in the note by their stage names: "repetition 1.3"
PREFILL_STOPS = CancelFlags()  # Stop pressed during a Prefill: read between two of the scheduler's chunks


def settings_note(knobs: Mapping) -> str:
    """Beside the knobs: which settings this step skips, and why (greedy takes the argmax; a neutral value is off)."""
    try:
        s = settings_from(knobs)
    except ValueError:
        return ""  # the message line says what is wrong
    set_truncations = [f"{t.label} {getattr(s, t.field):g}" for t in TRUNCATIONS if t.enabled(getattr(s, t.field))]
    notes = []
    if s.greedy and set_truncations:
        verb = "is" if len(set_truncations) == 1 else "are"
        notes.append(
            f"Temperature 0 is greedy: it takes the {term('argmax')}, so {' and '.join(set_truncations)} {verb} "
            "skipped "
            "(as in generate())."
        )
    on = [f"{p.name} {getattr(s, p.field):g}" for p in PENALTIES if p.enabled(getattr(s, p.field))]
    off = ", ".join(f"{p.name} {p.neutral:g}" for p in PENALTIES)
    notes.append(f"Penalties on: {', '.join(on)}." if on else f"Penalties off ({off}).")
    return " ".join(notes)


def apply_preset(config: AppConfig, name) -> Setup | dict:
    """A preset's prompt and settings (nothing changes for a name that is not a preset)."""
    if name not in PRESETS:
        return {}
    p = PRESETS[name]
    return Setup(
        prompt=p.prompt,
        template=p.template,
        temperature=p.temperature,
        top_k=p.top_k,
        top_p=p.top_p,
        min_p=p.min_p,
        repetition_penalty=p.repetition,
        max_new=p.max_new_tokens,
        start=start_line(name, config),
        more=opens_more(p.min_p, p.repetition),
    )


def prompt_view(config: AppConfig, model_id: str, message: str, template: str) -> Reads:
    """The exact text the model reads, and its tokens."""
    if not isinstance(message, str) or not message.strip():
        return Reads(text="", chips="")
    lm = get_model(config, model_id)
    try:
        p = encode_prompt(lm.tokenizer, message, template == CHAT and lm.chat, lm.context_length)
    except ValueError as err:
        return Reads(text=str(err), chips="")
    return Reads(text=p.text, chips=sequence.chips_html(p.tokens, p.ids, []))


def prefill(
    config: AppConfig,
    run_id,
    model_id,
    message,
    template,
    seed,
    max_new,
    stops,
    page,
    alone=False,
    path="eager",
    request: gr.Request | None = None,
) -> Started:
    """A new run: the prompt in one forward pass (in the scheduler's ticks unless `alone`), its first distribution;
    its lens read at once when the learner left that panel open. `path` "static" runs the decode step through a
    static cache, its passes its own, replayed as a CUDA graph where one can be (decoding.static.static_kind).
    Its room in the store is taken before the pass, or refused saying what to lower; Stop ends a prompt in the
    scheduler's chunks between two of them, and nothing of it lands."""
    state = page_state.read(page)
    lm = get_model(config, model_id)
    settings = settings_from(state.knobs, vocab_size=lm.vocab_size)
    seed = check_seed(seed)
    values.choice("Bars show", state.mode, distribution.MODES)  # before the run is stored, not after
    if template == CHAT and not lm.chat:
        raise ValueError(f"{lm.label} has no chat template: set Prompt format to raw text")
    max_new = values.whole("Max new tokens", max_new, 1, MAX_NEW_TOKENS_CAP)
    prompt = encode_prompt(lm.tokenizer, message, template == CHAT, lm.context_length)
    stops = validate.stop_strings(stops)
    path = values.choice("Decode step", path, [value for _, value in PATH_CHOICES])
    kwargs = dict(seed=seed, max_new_tokens=max_new, stop_strings=stops, top_n=TOP_N)
    check_fits(lm, len(prompt.ids), max_new)  # a run refused keeps the session's old one: checked before it goes
    stop_running(run_id)
    stop = PREFILL_STOPS.watch(request, None).should_stop
    run_id = STORE.reserve(run_need(lm, len(prompt.ids), max_new), replace=run_id)  # or refused, before any pass
    try:
        if path == "eager":
            run = Run(lm, prompt, **kwargs, scheduler=scheduler_for(lm), alone=bool(alone))
        else:  # a static cache's passes are its own: the scheduler packs growing caches only
            run = Run(lm, prompt, **kwargs, alone=True, path=static_kind(lm))
        run.prefill(stop=stop, told=reading.teller(state.asks))
    except Cancelled as err:
        STORE.release(run_id)
        took = PREFILL_STOPS.since_pressed(request)
        after = f", {took:.2f} s after you pressed Stop" if took is not None else ""
        raise ValueError(f"Prefill {err}{after}: nothing of it was kept. Press Prefill to start again.") from None
    except BaseException:
        STORE.release(run_id)
        raise
    finally:
        reading.forget(state.asks)
    entry = Entry(trace=run.trace, run=run, view=StepView(lens_on=state.lens_open))
    STORE.put(entry, run_id=run_id)
    with entry.lock:
        _show_preview(entry, settings)
        return Started(*view(entry, state, settings), run_id=run_id)


def set_alone(run_id, alone) -> None:
    """Run my steps alone: the session's next forward passes get a pass of their own (bit-exact with generate())."""
    if run_id is None:
        return
    with STORE.holding(run_id) as entry:
        if entry.run is not None:
            entry.run.alone = bool(alone)


def step(run_id, page, force_id=None) -> Answer:
    """One token (or, replaying a loaded trace, show one more recorded step)."""
    state = page_state.read(page)
    with STORE.holding(run_id) as entry:
        started = time.perf_counter()
        settings = _take(entry, state.knobs, force_id)
        answer = view(entry, state, settings, started=started)
        lens.after_step(entry)  # the panel open and the run stopped: its curve's pass, outside this step's server time
        return answer


def _take(entry: Entry, knobs: Mapping, force_id=None) -> SamplerSettings | None:
    """The step's work, without its view (the caller holds `entry`): choose and append a token, or, replaying a loaded
    trace, move to the next recorded step. Returns the settings it chose with (None for a replay)."""
    v: StepView = entry.view
    v.halted = None  # a step taken: the stop line no longer says Stop
    if entry.run is None:
        v.cursor = min(v.cursor + 1, len(entry.trace.steps))
        v.shown, v.preview = (entry.trace.steps[v.cursor - 1] if v.cursor else None), False
        return None
    settings = settings_from(knobs, vocab_size=entry.run.lm.vocab_size)
    if force_id is None and entry.run.done:  # the view says it is finished and what to press; nothing to redo
        return settings
    if force_id is not None and not v.preview and entry.trace.steps:
        _back(entry)  # forcing on a chosen step means: choose again at that step
    if entry.run.alone and entry.run.scheduler is not None and entry.run.last_pass.mode not in ("alone", "lens"):
        entry.run.refeed()  # "Run my steps alone" takes effect on this very step: its distribution from its own pass
        v.preview, v.pending = False, StepRecord()
    if lens.before_choosing(entry):  # the panel open: the step chooses from the logits its lens was read with
        v.preview = False
    seen = v.pending
    if not (v.preview and v.shown is not None and v.shown.settings == settings.to_dict()):
        seen.inspection = inspect_step(entry.run, settings)  # not what the page was shown: inspected afresh
    v.shown, v.preview = entry.run.step(settings, force_id=force_id), False
    v.records.append(seen)  # only once the step succeeded, so there is one record per step
    v.pending = StepRecord()
    v.cursor = len(entry.trace.steps)
    return settings


def force(run_id, force_id, page) -> Answer:
    if force_id is None or force_id == "":
        raise ValueError("Force a token: pick a candidate under the chart first (or click its bar), then press Force")
    with STORE.holding(run_id) as entry:
        run = entry.run
        if run is None:
            raise ValueError("a loaded trace has no model behind it: press Prefill to run live, then force a token")
        # checked before the step goes back a step, so a bad id leaves the run as it was
        force_id = values.whole("Force a token (token id)", force_id, 0, run.lm.vocab_size - 1)
        return step(run_id, page, force_id=force_id)


def run_steps(run_id, n, page):
    """Run N / Run to end: a generator, so the page follows the run (at most four views a second, each drawn only
    when it is sent: the token strip and the time chart send what was added since the last one sent) and Stop can
    cancel. Reset or a new Prefill stops it, their answer drawn after its last view (ui.running). On a finished run
    it shows the run as it is (the view says it is finished), never a blank page."""
    state = page_state.read(page)
    entry = STORE.get(run_id)
    limit = values.whole("Run N (the box beside it)", n, 1, MAX_NEW_TOKENS_CAP)
    settings = settings_from(state.knobs, vocab_size=entry.run.lm.vocab_size) if entry.run is not None else None
    if _finished(entry):
        # drawn with the run held, yielded with it let go: gradio asks a generator for each value in whichever of
        # its worker threads is free, and the run's RLock, held across a yield, could only be let go by the thread
        # that took it (another raised, and every later click of the page waited for the run)
        with entry.lock:
            shown = view(entry, state, settings)
        yield shown
        return
    first, trace = entry.view.cursor, entry.trace
    # the tokens this run may make: its limit, or what is left of max new tokens (of the recorded steps, replaying)
    left = trace.max_new_tokens - len(trace.steps) if entry.run is not None else len(trace.steps) - first
    asked = min(limit, left)
    if entry.run is not None:
        steps = drive(entry.run, limit=limit, advance=lambda: _taken(entry, state.knobs), deadline=deadline())
    else:  # a replay moves through its steps
        steps = (_taken(entry, state.knobs) for _ in range(asked))

    def drawn(_):
        with entry.lock:  # still running: more steps to take, and the run not finished
            made = entry.view.cursor - first
            running = (made, asked) if not _finished(entry) and made < limit else None
            return view(entry, state, settings, running=running)

    yield from entry.running.views(steps, draw=drawn)


def _taken(entry: Entry, knobs: Mapping) -> None:
    """One step of a Run N, its view not drawn: only the views sent are."""
    with entry.lock:
        _take(entry, knobs)
        lens.after_step(entry)


def run_to_end(run_id, page):
    yield from run_steps(run_id, MAX_NEW_TOKENS_CAP, page)  # a run stops by max_new_tokens at the latest


def _finished(entry: Entry) -> bool:
    return entry.run.done if entry.run is not None else entry.view.cursor >= len(entry.trace.steps)


def back(run_id, page) -> Answer:
    state = page_state.read(page)
    with STORE.holding(run_id) as entry:
        v: StepView = entry.view
        settings = None
        if entry.run is None:
            v.cursor = max(v.cursor - 1, 0)
            v.shown = entry.trace.steps[v.cursor - 1] if v.cursor else None
        else:
            settings = settings_from(state.knobs, vocab_size=entry.run.lm.vocab_size)  # bad knobs raise first
            _back(entry)
            _show_preview(entry, settings)
        return view(entry, state, settings)


def _back(entry: Entry) -> None:
    entry.run.back()
    v = entry.view
    v.halted = None
    # the step's record goes with it; the lens read before it chose stays: it read this very context
    v.pending = StepRecord(lens=v.records.pop().lens)
    v.cursor = len(entry.trace.steps)


def settings_changed(run_id, page, knobs: Mapping) -> Answer | dict:
    """A knob moved: redraw the next distribution under the new settings (no forward pass). The knobs come with the
    event itself, as the page has them now."""
    state = page_state.read(page)
    entry = STORE.get(run_id) if run_id is not None else None
    settings = settings_from(knobs, vocab_size=entry.run.lm.vocab_size if entry and entry.run else None)
    if entry is None:
        return {}  # nothing to redraw; checked first, so a bad value is said even before Prefill
    with entry.lock:  # whether there is a next distribution is read with the run held: a step may end it meanwhile
        if entry.run is None or entry.run.done:
            return {}
        _show_preview(entry, settings)
        return view(entry, state, settings)


def lens_opened(run_id, page) -> Answer | dict:
    """The lens panel opens: its rows for the distribution on the chart, in this one answer (read now, with the
    pending distribution shown again, when the chart's has none yet)."""
    if run_id is None:
        return {}
    state = page_state.read(page)
    with STORE.holding(run_id) as entry:
        settings = settings_from(state.knobs, vocab_size=entry.run.lm.vocab_size) if entry.run is not None else None
        if lens.opened(entry) and settings is not None and not entry.run.done:
            _show_preview(entry, settings)
        return view(entry, state, settings)


def _show_preview(entry: Entry, settings: SamplerSettings) -> None:
    v: StepView = entry.view
    lens.before_choosing(entry)
    v.shown, v.preview = entry.run.preview_step(settings), True
    v.pending.inspection = inspect_step(entry.run, settings)


def stopped(run_id, page) -> Answer | dict:
    """A new mode for the bars: the run as it stands (no longer said to be running)."""
    try:
        entry = STORE.get(run_id)
    except ValueError:  # no run, or it expired: nothing to say
        return {}
    return _as_it_stands(entry, page)


def halted(run_id, page, request: gr.Request | None = None) -> Answer | dict:
    """Stop: a Prefill under way stops between two of the scheduler's chunks (`PREFILL_STOPS`); a Run N or Run to end
    under way ends after its step in flight (ui.running), its last view sent before this answer; then the run as it
    stands, its stop line saying you stopped it, how soon after the press reached the server the run ended, and how
    to go on (until the next step: a redraw says it too)."""
    PREFILL_STOPS.cancel(request)
    try:
        entry = STORE.get(run_id)
    except ValueError:  # no run, or it expired (a Prefill under way reads its own Stop): nothing to say
        return {}
    took = entry.running.halt()
    if took is not None:
        with entry.lock:
            entry.view.halted = took
    return _as_it_stands(entry, page)


def _as_it_stands(entry: Entry, page) -> Answer:
    state = page_state.read(page)
    with entry.lock:
        live = entry.run is not None and not entry.run.done
        settings = settings_from(state.knobs, vocab_size=entry.run.lm.vocab_size) if live else None
        return view(entry, state, settings)


def strategies_drawn(run_id, page):
    """ "Each strategy alone", drawn as its panel opens, or comes on screen showing an older distribution than the
    chart's."""
    try:
        entry = STORE.get(run_id)
        state = page_state.read(page)
        settings = settings_from(state.knobs, vocab_size=entry.run.lm.vocab_size if entry.run is not None else None)
    except ValueError:  # no run yet, or it expired, or a bad knob (the step says it): the panel keeps its look
        return gr.skip() if run_id is not None else empty_html(shown_view.STRATEGIES_BLANK, 200)
    with entry.lock:
        return shown_view.strategies_view(entry, settings, entry.view.number)


def whole(run_id, part: str):
    """The whole stage or panels below, for a page whose copy missed a change (ui/patch.py)."""
    try:
        entry = STORE.get(run_id)
    except ValueError:
        return gr.skip()
    with entry.lock:
        return getattr(entry.view, part).resend()


def reset(run_id) -> Started:
    stop_running(run_id)
    STORE.release(run_id)
    return empty_view()


def stop_running(run_id) -> None:
    """A Run N under way on the session's run stops after the view in flight, before the caller answers (ui.running):
    Reset, a new Prefill, a loaded trace."""
    try:
        entry = STORE.runs.get(run_id)
    except ValueError:  # it was freed for another session's run, and its Run N has stopped on that
        return
    if entry is not None:
        entry.running.stop()


def save_trace(run_id):
    with STORE.holding(run_id) as entry:
        trace = entry.trace
    folder = Path(tempfile.mkdtemp(prefix="decoding-lab-"))
    (folder / "trace.json").write_text(trace.to_json(), encoding="utf-8")
    (folder / "trace.csv").write_text(trace.to_csv(), encoding="utf-8")
    return [str(folder / "trace.json"), str(folder / "trace.csv")]


NOT_A_TRACE = "that file is not a Decoding Lab trace (JSON from 'Save trace')"


def load_trace(run_id, file, page) -> Started | dict:
    if file is None:
        return {}
    state = page_state.read(page)
    values.choice("Bars show", state.mode, distribution.MODES)
    try:
        trace = Trace.from_json(Path(file).read_text(encoding="utf-8"))
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{NOT_A_TRACE}: {err}") from None
    shown = trace.steps[-1] if trace.steps else None
    entry = Entry(trace=trace, view=StepView(cursor=len(trace.steps), shown=shown, preview=False))
    new_id = STORE.put(entry)
    try:  # drawn before the session's own run is let go: right keys with wrong values fail here
        out = Started(*view(entry, state, None), run_id=new_id)
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        STORE.release(new_id)
        raise ValueError(f"{NOT_A_TRACE}: {err}") from None
    stop_running(run_id)
    STORE.release(run_id)
    return out
