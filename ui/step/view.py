"""What the step tab shows, drawn from a session's entry: the whole view of a click in one answer.

A click (Prefill, Step, Back, Force, a moved knob) is one event, and its answer holds everything that changed: the
chart, the token strip and the loop, and the panels below them. A panel costs only while it shows: "each strategy
alone" (vocabulary-sized work) is computed while it is open and on screen, the logit lens while it is open, and
otherwise left as it is (`gr.skip()`, nothing sent); the token strip and the time chart send only what the step added
(ui/patch.py).

What the tab saw of each step lives in that step's own record (`StepRecord`): what the inspectors read before it
chose, its lens, its drawing time. Back removes the record with the step.
"""

import html
import itertools
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import gradio as gr

from decoding.inspector import Inspection, strategies_alone
from decoding.pipeline import SamplerSettings
from decoding.stages import TEMPERATURE
from decoding.trace import Step
from ui.patch import Patcher
from ui.sessions import Entry
from ui.step import lens as lens_panel
from ui.step.lessons import PRESETS
from visuals import distribution, strategies
from visuals.chart import empty_html
from visuals.sandbox import views as sandbox
from visuals.serving import traffic as serving
from visuals.step import penalties, sequence, timeline

TOP_N = 20
GREEDY_NOTE = "*Temperature 0 is greedy: it takes the argmax, so top-k, top-p and min-p are skipped, as in generate()*"
KEYS = "Keys: <kbd>P</kbd> Prefill · <kbd>→</kbd> Step · <kbd>←</kbd> Back"
CHART_BLANK = "Press Prefill to see the first distribution"
STRATEGIES_BLANK = "Press Prefill: each strategy alone on the next distribution"
STRATEGIES_SHOWN = "strategies"  # in the page's list of panels on screen (`Panels.on_screen`)


@dataclass
class StepRecord:
    """What the tab saw of one distribution before a token was chosen from it, and what drawing its step took."""

    inspection: Inspection | None = None  # what the penalties moved, what each engine order keeps
    lens: object = None  # its logit lens (ui.step.lens.LensRead), read while the lens panel was open
    draw_ms: float | None = None  # the server's time drawing the step's view (None: not drawn, a Run N skipped it)


@dataclass
class StepView:
    """What the page shows of one run, kept on its store entry (`Entry.view`): the store holds the run, this tab
    holds what it has drawn of it."""

    cursor: int = 0  # steps shown; a live run shows them all, a replay moves through them
    records: list[StepRecord] = field(default_factory=list)  # one per step of the trace
    pending: StepRecord = field(default_factory=StepRecord)  # the distribution the next step chooses from
    shown: Step | None = None  # the distribution on the chart (a preview when `preview`)
    preview: bool = True
    lens_on: bool = False  # the "What each layer would have said" panel is open (ui/step/lens.py)
    whole: tuple | None = None  # (the run's ids, its decoding.lens.RunAgreement): the curve over a stopped run
    chips: Patcher = field(default_factory=Patcher)  # what the token strip was last sent
    time: Patcher = field(default_factory=Patcher)  # what the time chart was last sent
    penalties_sent: str | None = None  # the penalties chart as last sent: the same one is not sent again
    number: int = 0  # the number of the chart last drawn (`chart`): a panel drawn later is drawn for it

    def record(self, index: int) -> StepRecord | None:
        """What was seen of step `index`'s distribution: the pending one's when `index` is the next step."""
        if index == len(self.records):
            return self.pending
        return self.records[index] if 0 <= index < len(self.records) else None


class Panels(NamedTuple):
    """The panels of a click's answer that cost work, and whether each is drawn: "each strategy alone" when it is open
    and on screen (the page says which panels it shows), the lens when its panel is open (`StepView.lens_on`)."""

    strategies: bool = False


NO_PANELS = Panels()


def panels(strategies_open, on_screen: str | None) -> Panels:
    """From the page: the strategies panel's open state, and the panels its script saw on screen ("strategies ...");
    a page that has not said (an API call) is taken to show what is open."""
    shown = on_screen is None or STRATEGIES_SHOWN in str(on_screen).split()
    return Panels(strategies=bool(strategies_open) and shown)


class View(NamedTuple):
    """A click's answer: values from the handlers, or the page's components that show them."""

    chips: object
    loop: object
    stop: object
    chart: object
    candidate: object
    orders: object
    numbers: object
    run_id: object
    penalties: object
    timeline: object
    strategies: object
    # the lens panel (ui/step/lens.py): left as it is while the panel is closed
    lens_summary: object
    lens_table: object
    lens_note: object
    lens_curve: object


def start_line(preset: str) -> str:
    """The first line of the tab: what the chosen preset shows, and what to press."""
    watch = f"*{html.escape(preset.split(':')[0])}:* {PRESETS[preset].watch} " if preset in PRESETS else ""
    return f"**Press Prefill**, then **Step**. {watch}<span class='step-keys'>{KEYS}</span>"


_VIEWS = itertools.count(1)  # each chart drawn is numbered: a panel drawn for it carries its number


def chart(v: StepView | None, mode: str, number: int = 0) -> str:
    """The distribution on the chart, the pending one (a preview) or the step shown, marked with its `number`."""
    if v is None or v.shown is None:
        return empty_html(CHART_BLANK, 360)
    return numbered(distribution.distribution_figure(v.shown, mode, chosen=not v.preview, n=TOP_N), number)


def numbered(panel: str, number: int) -> str:
    """A panel drawn for the chart numbered `number`: the page's script draws it again if it comes on screen while
    the chart shows another (ui/step/keys.py)."""
    return f'<div class="step-drawn" data-view="{number}">{panel}</div>'


def view(
    entry: Entry,
    run_id: str,
    mode: str,
    settings: SamplerSettings | None,
    started: float | None = None,
    shown: Panels = NO_PANELS,
    running: bool = False,
) -> View:
    """The whole answer for `entry` as it stands; `started` (a new step's start) adds its drawing and server time;
    `running`: a Run N is under way (the stop line says so)."""
    start = time.perf_counter()
    v: StepView = entry.view
    trace, steps = entry.trace, entry.trace.steps[: v.cursor]
    live = entry.run is not None
    done_here = v.cursor == len(trace.steps)
    held = trace.held_text if done_here else ""
    phase = "sample" if v.preview else ("append" if steps else "context")
    choices = distribution.candidate_choices(v.shown, TOP_N) if v.shown is not None else []
    v.number = number = next(_VIEWS)
    drawn = chart(v, mode, number)
    if started is not None and v.records:  # a new step: keep its drawing time for the timeline
        v.records[-1].draw_ms = (time.perf_counter() - start) * 1e3
    out = View(
        chips=v.chips.send(sequence.chips_parts(trace.prompt_tokens, trace.prompt_ids, steps, held)),
        loop=sequence.loop_html(phase, len(steps), len(trace.prompt_ids) + len(steps)),
        stop=sequence.stop_html(trace.stop_reason if done_here else None, held, trace.text, live, running),
        chart=drawn,
        candidate=gr.update(choices=choices, value=None),
        orders=_orders(entry, settings),
        numbers=_numbers(entry, steps, started),
        run_id=run_id,
        penalties=_penalties(entry),
        timeline=v.time.send(_timeline(entry, steps)),
        strategies=strategies_view(entry, settings, number) if shown.strategies else gr.skip(),
        **{f"lens_{name}": value for name, value in lens_panel.side(entry)._asdict().items()},
    )
    return out


def _orders(entry: Entry, settings: SamplerSettings | None) -> str:
    """How the pass behind the distribution ran, and what each engine's stage order keeps of it."""
    v = entry.view
    if entry.run is None:
        return "Replaying a loaded trace: no model."
    record = _record_shown(entry)
    order = settings.order if settings is not None else None
    orders = sandbox.orders_markdown(record.inspection if record is not None else None, order)
    if v.shown is not None:
        if v.shown.settings.get(TEMPERATURE.field) == 0:  # why every engine "keeps" the whole vocabulary
            orders = f"{GREEDY_NOTE}  \n{orders}"
        orders = f"**Forward pass behind this distribution:** {_pass_line(v.shown)}  \n{orders}"
    return orders


def _record_shown(entry: Entry) -> StepRecord | None:
    """The record of the distribution on the chart."""
    v = entry.view
    if v.preview:
        return v.pending
    return v.records[v.cursor - 1] if entry.run is not None and v.cursor and v.cursor <= len(v.records) else None


def _numbers(entry: Entry, steps: list[Step], started: float | None) -> str:
    numbers = timeline.request_numbers(entry.trace.prefill_ms, *_times(steps))
    text = numbers.markdown() if numbers else ""
    if started is not None:
        server_ms = (time.perf_counter() - started) * 1e3
        text += (
            f" · this click on the server, from its arrival to its answer: <span id='server-ms'>{server_ms:.1f}</span>"
            " ms (the forward pass for the next token included)"
        )
    return text


def _pass_line(step) -> str:
    """How the pass behind `step` ran: alone, or with whom; and whether a batchmate could have flipped its pick."""
    gap = step.top[0].logit - step.top[1].logit if len(step.top) > 1 else None
    return serving.pass_caption(step.rows, step.forward_ms, step.pass_mode, step.noise, gap, kind=step.pass_kind)


def _penalties(entry: Entry):
    """The penalties chart of the distribution on the chart; nothing is sent when the page already shows it."""
    record = _record_shown(entry)
    inspection = record.inspection if record is not None else None
    if inspection is None:
        drawn = penalties.penalties_figure([], False) if entry.run is not None else empty_html("No penalties", 160)
    else:
        drawn = penalties.penalties_figure(inspection.moved, inspection.penalties_on)
    if drawn == entry.view.penalties_sent:
        return gr.skip()
    entry.view.penalties_sent = drawn
    return drawn


def _timeline(entry: Entry, steps: list[Step]):
    """The time chart: the prefill (drawn as a copy when the prefix cache answered it), then each step."""
    if not steps:
        return timeline.timeline_blank()
    first = steps[0]
    prefill = timeline.Prefill(entry.trace.prefill_ms, copied=first.pass_mode == "cached")
    draw = [r.draw_ms or 0.0 for r in entry.view.records[: len(steps)]]
    return timeline.request_timeline(prefill, *_times(steps), draw)


def strategies_view(entry: Entry, settings: SamplerSettings | None, number: int):
    """Greedy, temperature, top-k, top-p, min-p, each alone on the raw logits the next step chooses from.
    Off settings show their usual value; a settings error leaves the panel as it is (the step says why). Marked with
    the number of the chart it was drawn for (the page's script draws it again when it comes on screen stale)."""
    run = entry.run
    if run is None:
        return empty_html("Each strategy alone needs a live run (a replayed trace has no logits)", 200)
    if run.logits is None:  # the run has ended: there is no next token to choose
        return empty_html("The run is finished: press Prefill to run again", 200)
    if settings is None:
        return gr.skip()
    results, labels = strategies_alone(run, settings, TOP_N)  # the run's processed distribution, read
    return numbered(strategies.strategies_figure(results, labels), number)


def _times(steps) -> tuple[list[float], list[float]]:
    return [s.forward_ms for s in steps], [s.sample_ms for s in steps]


def empty_view() -> View:
    return View(
        chips="",
        loop=sequence.loop_html("context", 0, 0),
        stop="",
        chart=empty_html(CHART_BLANK, 360),
        candidate=gr.update(choices=[], value=None),
        orders="",
        numbers="",
        run_id=None,
        penalties=empty_html("Penalties appear here once a run starts", 160),
        timeline=timeline.timeline_blank().html,
        strategies=empty_html(STRATEGIES_BLANK, 200),
        lens_summary=gr.skip(),
        lens_table=gr.skip(),
        lens_note=gr.skip(),
        lens_curve=gr.skip(),
    )
