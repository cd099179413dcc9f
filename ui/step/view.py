"""What the step tab shows, drawn from a session's entry. The main view (chips, loop, chart, numbers) comes
back with the click; the side panels (penalties, timeline) follow in a second event, so the chart the
learner is watching is not held up by figures below the fold."""

import html
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import gradio as gr

from decoding.inspector import strategies_alone
from decoding.pipeline import SamplerSettings
from decoding.stages import TEMPERATURE
from decoding.trace import Step
from ui.sessions import STORE, Entry
from ui.step import lens
from ui.step.lessons import PRESETS
from visuals import distribution, strategies
from visuals.sandbox import views as sandbox
from visuals.serving import traffic as serving
from visuals.step import penalties, sequence, timeline
from visuals.theme import empty_figure

TOP_N = 20
GREEDY_NOTE = "*Temperature 0 is greedy: it takes the argmax, so top-k, top-p and min-p are skipped, as in generate()*"
KEYS = "Keys: <kbd>P</kbd> Prefill · <kbd>→</kbd> Step · <kbd>←</kbd> Back"


@dataclass
class StepView:
    """What the page shows of one run, kept on its store entry (`Entry.view`): the store holds the run, this tab
    holds what it has drawn of it."""

    cursor: int = 0  # steps shown; a live run shows them all, a replay moves through them
    extras: list = field(default_factory=list)  # per step: what the inspectors saw before choosing
    draw_ms: list[float] = field(default_factory=list)  # per step: server time spent drawing
    shown: Step | None = None  # the distribution on the chart (a preview when `preview`)
    preview: bool = True
    preview_extras: object = None
    penalties_blank_sent: bool = False  # the page already shows the empty penalties chart
    lens_on: bool = False  # the "What each layer would have said" panel is open (ui/step/lens.py)
    lenses: dict = field(default_factory=dict)  # per step index: the lens read there (ui.step.lens.Seen)
    whole: tuple | None = None  # (the run's ids, its decoding.lens.RunAgreement): the curve over a stopped run


class View(NamedTuple):
    """The main view, drawn with each click: values from the handlers, or the page's components that show them."""

    chips: object
    loop: object
    stop: object
    chart: object
    candidate: object
    orders: object
    numbers: object
    run_id: object


class Side(NamedTuple):
    """The panels below the chart, drawn after it."""

    penalties: object
    timeline: object
    strategies: object
    lens: object  # the stamp of "What each layer would have said" (ui/step/lens.py): its change draws that panel


def start_line(preset: str) -> str:
    """The first line of the tab: what the chosen preset shows, and what to press."""
    watch = f"*{html.escape(preset.split(':')[0])}:* {PRESETS[preset].watch} " if preset in PRESETS else ""
    return f"**Press Prefill**, then **Step**. {watch}<span class='step-keys'>{KEYS}</span>"


def redraw_chart(run_id, mode):
    v: StepView | None = STORE.get(run_id).view if run_id else None
    if v is None or v.shown is None:
        return empty_figure("Press Prefill to see the first distribution")
    return distribution.distribution_figure(v.shown, mode, chosen=not v.preview, n=TOP_N)


def view(entry: Entry, run_id: str, mode: str, order: str, started: float | None = None) -> View:
    """The main view of `entry` as it stands; `started` (a new step's start) adds its drawing and server time."""
    start = time.perf_counter()
    v: StepView = entry.view
    trace, steps = entry.trace, entry.trace.steps[: v.cursor]
    live = entry.run is not None
    done_here = v.cursor == len(trace.steps)
    held = trace.held_text if done_here else ""
    phase = "sample" if v.preview else ("append" if steps else "context")
    choices = distribution.candidate_choices(v.shown, TOP_N) if v.shown is not None else []
    orders = sandbox.orders_markdown(_extras(entry), order) if live else "Replaying a loaded trace: no model."
    if live and v.shown is not None:
        if v.shown.settings.get(TEMPERATURE.field) == 0:  # why every engine "keeps" the whole vocabulary
            orders = f"{GREEDY_NOTE}  \n{orders}"
        orders = f"**Forward pass:** {_pass_line(v.shown)}  \n{orders}"
    chips = sequence.chips_html(trace.prompt_tokens, trace.prompt_ids, steps, held)
    loop = sequence.loop_html(phase, len(steps), len(trace.prompt_ids) + len(steps))
    stop = sequence.stop_html(trace.stop_reason if done_here else None, held, trace.text, live)
    chart = redraw_chart(run_id, mode)
    if started is not None:  # a new step: keep its drawing time for the timeline
        v.draw_ms.append((time.perf_counter() - start) * 1e3)
    numbers = timeline.request_numbers(trace.prefill_ms, *_times(steps))
    text = numbers.markdown() if numbers else ""
    if started is not None:
        server_ms = (time.perf_counter() - started) * 1e3
        text += f" · server time for this step: <span id='server-ms'>{server_ms:.1f}</span> ms"
    return View(
        chips=chips,
        loop=loop,
        stop=stop,
        chart=chart,
        candidate=gr.update(choices=choices, value=None),
        orders=orders,
        numbers=text,
        run_id=run_id,
    )


def _pass_line(step) -> str:
    """How the pass behind `step` ran: alone, or with whom; and whether a batchmate could have flipped its pick."""
    gap = step.top[0].logit - step.top[1].logit if len(step.top) > 1 else None
    return serving.pass_caption(step.rows, step.forward_ms, step.pass_mode, step.noise, gap)


def side_view(run_id, settings: SamplerSettings | None, strategies_open: bool = True) -> Side:
    """The penalties chart, the request timeline, and each strategy alone on the pending logits (left as it is while
    its panel is closed: opening it draws it, `strategies_panel`)."""
    try:
        entry = STORE.get(run_id)
    except ValueError:  # no run yet, or it expired
        return Side(
            penalties=empty_figure("Penalties appear here once a run starts", 260),
            timeline=timeline.request_timeline_figure(0, [], []),
            strategies=empty_figure(STRATEGIES_BLANK, 260) if strategies_open else gr.skip(),
            lens=lens.stamp(None),
        )
    v: StepView = entry.view
    extras = _extras(entry)
    on = bool(extras and extras.penalties_on)
    if not on and v.penalties_blank_sent:
        pen = gr.skip()  # the browser already shows "no penalty is on": redrawing it costs a plotly render
    else:
        pen = penalties.penalties_figure(extras.moved, on) if extras else empty_figure("No penalties", 260)
    v.penalties_blank_sent = not on
    steps = entry.trace.steps[: v.cursor]
    time_fig = timeline.request_timeline_figure(entry.trace.prefill_ms, *_times(steps), v.draw_ms[: len(steps)])
    strategies = strategies_view(entry, settings) if strategies_open else gr.skip()
    return Side(penalties=pen, timeline=time_fig, strategies=strategies, lens=lens.stamp(entry))


STRATEGIES_BLANK = "Press Prefill: each strategy alone on the next distribution"


def strategies_panel(run_id, settings: SamplerSettings | None):
    """Each strategy alone, drawn as its panel opens (closed, the side panels leave it as it was)."""
    try:
        entry = STORE.get(run_id)
    except ValueError:  # no run yet, or it expired
        return empty_figure(STRATEGIES_BLANK, 260)
    return strategies_view(entry, settings)


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
    results, labels = strategies_alone(run, settings, TOP_N)  # the run's processed distribution, read
    return strategies.strategies_figure(results, labels, height=400)


def _extras(entry: Entry):
    v: StepView = entry.view
    if v.preview:
        return v.preview_extras
    return v.extras[v.cursor - 1] if entry.run is not None and v.cursor else None


def _times(steps) -> tuple[list[float], list[float]]:
    return [s.forward_ms for s in steps], [s.sample_ms for s in steps]


def empty_view() -> View:
    return View(
        chips="",
        loop=sequence.loop_html("context", 0, 0),
        stop="",
        chart=empty_figure("Press Prefill to see the first distribution"),
        candidate=gr.update(choices=[], value=None),
        orders="",
        numbers="",
        run_id=None,
    )
