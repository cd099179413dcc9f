"""What the step tab shows, drawn from a session's entry. The main view (chips, loop, chart, numbers) comes
back with the click; the side panels (penalties, timeline) follow in a second event, so the chart the
learner is watching is not held up by figures below the fold."""

import html
import inspect
import time
from functools import wraps

import gradio as gr

from decoding.pipeline import SamplerSettings
from decoding.prompts import token_texts
from decoding.sandbox import each_strategy_alone
from ui.sessions import STORE, Entry
from ui.step.lessons import PRESETS
from visuals import distribution, penalties, sandbox, sequence, serving, strategies, timeline
from visuals.theme import empty_figure

TOP_N = 20
VIEW_SIZE = 8  # chips, loop, stop reason, chart, force picker, engine orders, numbers, run id
GREEDY_NOTE = "*Temperature 0 is greedy: it takes the argmax, so top-k, top-p and min-p are skipped, as in generate()*"
KEYS = "Keys: <kbd>P</kbd> Prefill · <kbd>→</kbd> Step · <kbd>←</kbd> Back"


def start_line(preset: str) -> str:
    """The first line of the tab: what the chosen preset shows, and what to press."""
    watch = f"*{html.escape(preset.split(':')[0])}:* {PRESETS[preset].watch} " if preset in PRESETS else ""
    return f"**Press Prefill**, then **Step**. {watch}<span class='step-keys'>{KEYS}</span>"


def said(fn):
    """A step handler whose bad values are said in one place, the message line under the buttons, in the words of
    the page; everything else keeps its view (no "Error" stamped on every panel). A good event clears the line."""

    def failed(err: ValueError) -> tuple:
        return (*[gr.skip()] * VIEW_SIZE, f"<div class='step-error'>{html.escape(str(err))}</div>")

    if inspect.isgeneratorfunction(fn):

        @wraps(fn)
        def generator(*args, **kwargs):
            try:
                for out in fn(*args, **kwargs):
                    yield (*out, "")
            except ValueError as err:
                yield failed(err)

        return generator

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return (*fn(*args, **kwargs), "")
        except ValueError as err:
            return failed(err)

    return wrapper


def redraw_chart(run_id, mode):
    entry = STORE.get(run_id) if run_id else None
    if entry is None or entry.shown is None:
        return empty_figure("Press Prefill to see the first distribution")
    return distribution.distribution_figure(entry.shown, mode, chosen=not entry.preview, n=TOP_N)


def view(entry: Entry, run_id: str, mode: str, order: str, started: float | None = None) -> tuple:
    """chips, loop, stop reason, chart, force picker, engine orders, numbers, run id."""
    start = time.perf_counter()
    trace, steps = entry.trace, entry.trace.steps[: entry.cursor]
    live = entry.run is not None
    done_here = entry.cursor == len(trace.steps)
    held = trace.held_text if done_here else ""
    phase = "sample" if entry.preview else ("append" if steps else "context")
    choices = distribution.candidate_choices(entry.shown, TOP_N) if entry.shown is not None else []
    orders = sandbox.orders_markdown(_extras(entry), order) if live else "Replaying a loaded trace: no model."
    if live and entry.shown is not None:
        if entry.shown.settings.get("temperature") == 0:  # why every engine "keeps" the whole vocabulary
            orders = f"{GREEDY_NOTE}  \n{orders}"
        orders = f"**Forward pass:** {_pass_line(entry.shown)}  \n{orders}"
    out = (
        sequence.chips_html(trace.prompt_tokens, trace.prompt_ids, steps, held),
        sequence.loop_html(phase, len(steps), len(trace.prompt_ids) + len(steps)),
        sequence.stop_html(trace.stop_reason if done_here else None, held, trace.text, live),
        redraw_chart(run_id, mode),
        gr.update(choices=choices, value=None),
        orders,
    )
    if started is not None:  # a new step: keep its drawing time for the timeline
        entry.draw_ms.append((time.perf_counter() - start) * 1e3)
    numbers = timeline.request_numbers(trace.prefill_ms, *_times(steps))
    text = numbers.markdown() if numbers else ""
    if started is not None:
        server_ms = (time.perf_counter() - started) * 1e3
        text += f" · server time for this step: <span id='server-ms'>{server_ms:.1f}</span> ms"
    return (*out, text, run_id)


def _pass_line(step) -> str:
    """How the pass behind `step` ran: alone, or with whom; and whether a batchmate could have flipped its pick."""
    gap = step.top[0].logit - step.top[1].logit if len(step.top) > 1 else None
    return serving.pass_caption(step.rows, step.forward_ms, step.pass_mode, step.noise, gap)


def side_view(run_id, settings: SamplerSettings | None) -> tuple:
    """The penalties chart, the request timeline, and each strategy alone on the pending logits."""
    try:
        entry = STORE.get(run_id)
    except ValueError:  # no run yet, or it expired
        return (
            empty_figure("Penalties appear here once a run starts", 260),
            timeline.request_timeline_figure(0, [], []),
            empty_figure(STRATEGIES_BLANK, 260),
        )
    extras = _extras(entry)
    on = bool(extras and extras.penalties_on)
    if not on and entry.penalties_blank_sent:
        pen = gr.skip()  # the browser already shows "no penalty is on": redrawing it costs a plotly render
    else:
        pen = penalties.penalties_figure(extras.moved, on) if extras else empty_figure("No penalties", 260)
    entry.penalties_blank_sent = not on
    steps = entry.trace.steps[: entry.cursor]
    time_fig = timeline.request_timeline_figure(entry.trace.prefill_ms, *_times(steps), entry.draw_ms[: len(steps)])
    return pen, time_fig, strategies_view(entry, settings)


STRATEGIES_BLANK = "Press Prefill: each strategy alone on the next distribution"


def strategies_view(entry: Entry, settings: SamplerSettings | None):
    """Greedy, temperature, top-k, top-p, min-p, each alone on the raw logits the next step chooses from.
    Off settings show their usual value; a settings error leaves the panel as it is (the step says why)."""
    run = entry.run
    if run is None:
        return empty_figure("Each strategy alone needs a live run (a replayed trace has no logits)", 260)
    if run.logits is None:  # the run has ended: there is no next token to choose
        return empty_figure("The run is finished: press Prefill to run again", 260)
    if settings is None:
        return gr.skip()
    results = each_strategy_alone(run.logits, settings, TOP_N)
    ids = results[0].ids
    labels = dict(zip(ids, token_texts(run.lm.tokenizer, ids)))
    return strategies.strategies_figure(results, labels, height=400)


def _extras(entry: Entry):
    if entry.preview:
        return entry.preview_extras
    return entry.extras[entry.cursor - 1] if entry.run is not None and entry.cursor else None


def _times(steps) -> tuple[list[float], list[float]]:
    return [s.forward_ms for s in steps], [s.sample_ms for s in steps]


def empty_view() -> tuple:
    blank = empty_figure("Press Prefill to see the first distribution")
    return ("", sequence.loop_html("context", 0, 0), "", blank, gr.update(choices=[], value=None), "", "", None)
