"""What the step tab shows, drawn from a session's entry: the whole answer of a click, in four elements.

A click (Prefill, Step, Back, Force, a moved knob) is one event, and its answer holds everything that changed, in as
few page elements as the layout allows, because each element an event writes costs the page at every click (gradio
6 copies each output's props for its status: docs/measurements/step.md):
- the stage: the chart, the loop, the token strip, the stop line, the force row and the engine orders, patched
  (ui/patch.py): a step sends its chart, its one new chip, and whatever else changed;
- "each strategy alone", computed only while its panel is open and on screen (vocabulary-sized work), else left as
  it is (`gr.skip()`, nothing sent);
- the logit lens, only while its panel is open;
- the panels below: penalties, the time chart (a step sends its one column) and the request's numbers, patched.

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
from ui.context import AppConfig, quoting, this_server
from ui.markup import html_of
from ui.patch import Patcher
from ui.sessions import Entry
from ui.step import lens as lens_panel
from ui.step.lessons import PRESETS
from ui.step.page_state import PageState
from visuals import distribution, strategies
from visuals.chart import empty_html
from visuals.glossary import term
from visuals.parts import joined
from visuals.sandbox import views as sandbox
from visuals.serving import traffic as serving
from visuals.step import penalties, sequence, timeline

TOP_N = 20
GREEDY_NOTE = (
    f"*Temperature 0 is greedy: it takes the {term('argmax')}, so top-k, top-p and min-p are skipped, as in generate()*"
)
KEYS = "Keys: <kbd>P</kbd> Prefill · <kbd>→</kbd> Step · <kbd>←</kbd> Back"
CHART_BLANK = "Press Prefill to see the first distribution"
STRATEGIES_BLANK = "Press Prefill: each strategy alone on the next distribution"
MODE_HINT = "what the next token is drawn from (dash: the model's own), the model's own, or the logits"
FORCE_HINT = "the step shown picks this instead; the run branches"


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
    stage: Patcher = field(default_factory=Patcher)  # what the stage was last sent
    below: Patcher = field(default_factory=Patcher)  # what the panels below were last sent
    number: int = 0  # the number of the chart last drawn (`chart`): a panel drawn later is drawn for it
    # Stop ended a run: the seconds from the press reaching the server to the run's end (None: not stopped since the
    # last step); every redraw says it until the next step
    halted: float | None = None

    def record(self, index: int) -> StepRecord | None:
        """What was seen of step `index`'s distribution: the pending one's when `index` is the next step."""
        if index == len(self.records):
            return self.pending
        return self.records[index] if 0 <= index < len(self.records) else None


class Answer(NamedTuple):
    """A click's answer: values from the handlers, or the page's elements that show them."""

    stage: object
    strategies: object
    lens: object
    below: object


class Started(NamedTuple):
    """The answer of a click that starts a run (or ends one): the session's new run id too."""

    stage: object
    strategies: object
    lens: object
    below: object
    run_id: object


def start_line(preset: str, config: AppConfig) -> str:
    """The first line of the tab: what the chosen preset shows (its numbers named as measured elsewhere on another
    run than theirs), and what to press."""
    watch = ""
    if preset in PRESETS:
        watch = f"*{html.escape(preset.split(':')[0])}:* {quoting(PRESETS[preset].watch, config)} "
    return f"**Press Prefill**, then **Step**. {watch}<span class='step-keys'>{KEYS}</span>"


_VIEWS = itertools.count(1)  # each chart drawn is numbered: a panel drawn for it carries its number


def chart(v: StepView | None, mode: str, number: int = 0) -> str:
    """The distribution on the chart, the pending one (a preview) or the step shown, marked with its `number`."""
    if v is None or v.shown is None:
        return empty_html(CHART_BLANK, 330)
    return numbered(distribution.distribution_figure(v.shown, mode, chosen=not v.preview, n=TOP_N), number)


def numbered(panel: str, number: int) -> str:
    """A panel drawn for the chart numbered `number`: the page's script draws it again if it comes on screen while
    the chart shows another (ui/step/keys.py)."""
    return f'<div class="step-drawn" data-view="{number}">{panel}</div>'


def view(
    entry: Entry,
    page: PageState,
    settings: SamplerSettings | None,
    started: float | None = None,
    running: tuple[int, int] | None = None,
) -> Answer:
    """The whole answer for `entry` as it stands; `started` (a new step's start) adds its drawing and server time;
    `running`: a Run N is under way, (tokens made, tokens asked for); the stop line says how far, or that the person
    pressed Stop (`StepView.halted`)."""
    start = time.perf_counter()
    v: StepView = entry.view
    trace, steps = entry.trace, entry.trace.steps[: v.cursor]
    done_here = v.cursor == len(trace.steps)
    held = trace.held_text if done_here else ""
    phase = "sample" if v.preview else ("append" if steps else "context")
    v.number = number = next(_VIEWS)
    drawn = chart(v, page.mode, number)
    if started is not None and v.records:  # a new step: keep its drawing time for the timeline
        v.records[-1].draw_ms = (time.perf_counter() - start) * 1e3
    stage = joined(
        {
            "step-dist": drawn,
            "step-loop": sequence.loop_html(phase, len(steps), len(trace.prompt_ids) + len(steps)),
            "step-chips": sequence.chips_parts(trace.prompt_tokens, trace.prompt_ids, steps, held),
            "step-stop": sequence.stop_html(
                trace.stop_reason if done_here else None, held, trace.text, entry.run is not None, running, v.halted
            ),
            "step-force-row": force_row(v.shown, page.mode),
            "step-orders": html_of(_orders(entry, settings)),
        }
    )
    below = joined(
        {
            "step-penalties": _penalties(entry),
            "step-time": _timeline(entry, steps),
            "step-numbers": html_of(_numbers(entry, steps, started)),
        }
    )
    return Answer(
        stage=v.stage.send(stage),
        strategies=strategies_view(entry, settings, number) if page.strategies_shown else gr.skip(),
        lens=lens_panel.side(entry),
        below=v.below.send(below),
    )


def force_row(shown: Step | None, mode: str) -> str:
    """What the bars show (native radio buttons: the page's script redraws the chart as one is picked), and the
    token to force instead of the draw (a native picker: its Force button goes the way a click on a bar goes)."""
    modes = "".join(
        f'<label><input type="radio" name="step-mode" value="{html.escape(m)}"'
        f"{' checked' if m == mode else ''}> {html.escape(m)}</label>"
        for m in distribution.MODES
    )
    choices = distribution.candidate_choices(shown, TOP_N) if shown is not None else []
    options = "".join(f'<option value="{token}">{html.escape(label)}</option>' for label, token in choices)
    return (
        f'<fieldset class="step-mode" id="step-mode"><legend>Bars show</legend>{modes}'
        f'<span class="hint">{MODE_HINT}</span></fieldset>'
        f'<div class="step-picker"><label for="step-candidate">Force a token (or click its bar)</label>'
        f'<select id="step-candidate"><option value="">pick a candidate</option>{options}</select>'
        f'<button type="button" id="step-force">Force</button><span class="hint">{FORCE_HINT}</span></div>'
    )


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
        behind = f"**{term('forward pass', 'Forward pass')} behind this distribution:**"
        orders = f"{behind} {_pass_line(v.shown)}  \n{orders}"
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
    return serving.pass_caption(
        step.rows,
        step.forward_ms,
        step.pass_mode,
        step.noise,
        gap,
        kind=step.pass_kind,
        server=this_server(),
        impl=step.pass_impl,
        origin=step.pass_origin,
    )


def _penalties(entry: Entry) -> str:
    """The penalties chart of the distribution on the chart."""
    record = _record_shown(entry)
    inspection = record.inspection if record is not None else None
    if inspection is None:
        return penalties.penalties_figure([], False) if entry.run is not None else empty_html("No penalties", 160)
    return penalties.penalties_figure(inspection.moved, inspection.penalties_on)


def _timeline(entry: Entry, steps: list[Step]):
    """The time chart: the prefill (drawn as a copy when the prefix cache answered it), then each step."""
    if not steps:
        return timeline.timeline_blank()
    trace = entry.trace
    prefill = timeline.Prefill(trace.prefill_ms, steps[0].pass_mode == "cached", trace.prefill_computed_ms)
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


def blank_stage(mode: str = distribution.MODES[0]) -> str:
    """The stage before any run."""
    return joined(
        {
            "step-dist": empty_html(CHART_BLANK, 330),
            "step-loop": sequence.loop_html("context", 0, 0),
            "step-chips": "",
            "step-stop": "",
            "step-force-row": force_row(None, mode),
            "step-orders": "",
        }
    ).html


def blank_below() -> str:
    """The panels below the chart before any run."""
    penalties_blank = empty_html("Penalties appear here once a run starts", 160)
    return joined({"step-penalties": penalties_blank, "step-time": timeline.timeline_blank(), "step-numbers": ""}).html


def empty_view() -> Started:
    return Started(
        stage={"v": 0, "html": blank_stage()},
        strategies=empty_html(STRATEGIES_BLANK, 200),
        lens=gr.skip(),
        below={"v": 0, "html": blank_below()},
        run_id=None,
    )
