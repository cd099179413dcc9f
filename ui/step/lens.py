"""The step tab's "What each layer would have said" panel: the logit lens (decoding.lens) of the distribution on the
chart, a row per layer, and over the run how often each layer's top-1 was the token chosen.

Closed, it costs nothing: no hidden state is kept, no pass is added, and a click's answer leaves it as it is (nothing
sent). Open, it is drawn in the click's own answer; each distribution the tab shows is read again by one extra pass
of the session's own over its last position, with every layer's hidden state; that pass's logits become the ones
the step chooses from, so the lens's final row is the chart, bit for bit. Each read is kept in the record of the
step it was read for (ui.step.view.StepRecord). A moved knob reuses the lens (the
model's distribution did not change); the agreement curve reuses every lens the run already read, with no pass of its
own, until the run stops: then one more pass over its whole text (decoding.lens.run_agreement) reads the lens at
every step, whether taken with the panel open or not, once per run (Back or another token makes it another run's)."""

from dataclasses import dataclass
from typing import NamedTuple

import gradio as gr

from decoding.lens import agreement, lens_run, run_agreement
from ui.context import model_turn
from ui.sessions import STORE, Entry
from visuals import lens as visuals
from visuals.glossary import term

TRY_THIS = """**Try this:** 1. With the preset **Confident**, press **Prefill** and open this panel: 31 rows,
embeddings to layer 30; the last is the chart's ␣Paris at 77%, and no earlier layer has ␣Paris on top.
2. Press **Step** twice: each step's lens is read before it chooses, and the curve below counts where each layer
already agreed. 3. Press **Run to end**: when the run stops, the curve covers every step of it, from one more pass
over its whole text, its cost said above it. Its last point is the final layer's own share: below 100% here, since
the sampler drew tokens the final layer did not rank first. 4. In the *Speculative decoding* tab, the early-exit
preset drafts from layer 8: row 8 of this table."""
HINT = "Press Prefill or Step: each layer's guess at the distribution on the chart appears here."
CURVE_NOTE = (
    "From the lens rows this run already read (each step taken with this panel open), no extra pass: the share of "
    f"those steps whose lens {term('top-1')} at each layer is the token the step chose. When the run stops, one more "
    "pass over its whole text gives the curve for every step."
)


@dataclass
class LensRead:
    """One distribution's lens, with the context it was read at and the logits it left pending."""

    ids: tuple[int, ...]
    logits: object  # the run's pending logits right after the lens pass: the same object while nothing replaced them
    lens: object  # decoding.lens.LayerLens


class LensView(NamedTuple):
    summary: str
    table: str
    note: str  # what the curve counts, and for a whole run what its pass cost
    curve: str

    def html(self) -> str:
        """The panel as one element of the page (a click writes one element, not four)."""
        return (
            f'<div id="step-lens-summary">{self.summary}</div><div id="step-lens-table">{self.table}</div>'
            f'<div id="step-lens-curve-note" class="hint">{self.note}</div><div id="step-lens-agree">{self.curve}</div>'
        )


BLANK = LensView(summary=HINT, table="", note=CURVE_NOTE, curve=visuals.agreement_figure([], 0))


@dataclass(frozen=True)
class LensPanel:
    accordion: gr.Accordion
    view: gr.HTML


def layout() -> LensPanel:
    with gr.Accordion("What each layer would have said", open=False, elem_id="step-lens") as accordion:
        gr.Markdown(
            f"Each layer's hidden state read through the model's {term('final norm')} and {term('LM head')} (the "
            "logit lens): the token each layer would have picked had the model stopped there. " + visuals.BIAS_NOTE,
            elem_classes="hint",
        )
        gr.Markdown(TRY_THIS, elem_id="step-lens-try")
        view = gr.HTML(BLANK.html(), elem_id="step-lens-view")
    return LensPanel(accordion=accordion, view=view)


def before_choosing(entry: Entry) -> bool:
    """With the panel open, the lens of the run's pending distribution, unless already read for these very logits.
    Returns whether the pending logits were computed again (the step must inspect them afresh)."""
    v, run = entry.view, entry.run
    if not v.lens_on or run is None or run.logits is None:
        return False
    if v.pending.lens is not None and v.pending.lens.logits is run.logits:
        return False
    with model_turn(run.lm, "the logit lens"):
        seen = lens_run(run)
    v.pending.lens = LensRead(tuple(run.ids), run.logits, seen)
    return True


def _valid(entry: Entry, index: int):
    """The lens read at step `index`, if the context there is still the run's (Back and a new choice change it)."""
    record = entry.view.record(index)
    seen = record.lens if record is not None else None
    trace = entry.trace
    if seen is None or index > len(trace.steps):
        return None
    return seen if seen.ids == tuple(trace.prompt_ids + trace.token_ids[:index]) else None


def after_step(entry: Entry) -> None:
    """With the panel open and the run stopped: the lens agreement over the whole run, one pass, once per run."""
    v, run = entry.view, entry.run
    if not v.lens_on or run is None or not run.done or _whole(entry) is not None:
        return
    ids = tuple(run.ids)  # the text read, whatever the session does meanwhile
    with model_turn(run.lm, "the logit lens over the run"):
        v.whole = (ids, run_agreement(run.lm, list(ids), len(run.prompt.ids)))


def _whole(entry: Entry):
    """The whole run's agreement, if read for the text the chart's run has now (decoding.lens.RunAgreement)."""
    v, trace = entry.view, entry.trace
    if v.whole is None or v.whole[0] != tuple(trace.prompt_ids + trace.token_ids[: v.cursor]):
        return None
    return v.whole[1]


def _curve(entry: Entry) -> tuple[object, str]:
    """The agreement curve and the note above it: the whole run's once read, else the steps read with the panel."""
    whole = _whole(entry)
    if whole is not None:
        return visuals.agreement_figure(whole.shares, whole.steps, whole_run=True), visuals.run_curve_note(whole)
    done = [(_valid(entry, i), s.token_id) for i, s in enumerate(entry.trace.steps[: entry.view.cursor])]
    done = [(x.lens, token) for x, token in done if x is not None]
    return visuals.agreement_figure(agreement([x for x, _ in done], [t for _, t in done]), len(done)), CURVE_NOTE


def draw(entry: Entry) -> LensView:
    """The panel for the distribution on the chart, and the run's agreement curve."""
    v = entry.view
    index = len(entry.trace.steps) if v.preview else v.cursor - 1
    seen = _valid(entry, index) if index >= 0 else None
    curve, note = _curve(entry)
    if seen is None:
        why = "a replayed trace has no model to read" if entry.run is None else "this step was taken with it closed"
        return LensView(
            summary=f"No lens for the distribution on the chart: {why}. {HINT}", table="", note=note, curve=curve
        )
    lens = seen.lens
    taken = None if v.preview else entry.trace.steps[index]  # the chart's step, once it has chosen
    summary = f"{visuals.summary_line(lens, taken)}<br><small>{visuals.cost_line(lens)}</small>"
    return LensView(summary=summary, table=visuals.lens_table_html(lens), note=note, curve=curve)


def _shows_lens(entry: Entry) -> bool:
    """Whether the chart's distribution already has its lens (else the panel reads the pending one, and the chart
    shows it)."""
    v = entry.view
    if entry.run is None or entry.run.logits is None:
        return True  # nothing more to read
    if v.preview:
        seen = v.pending.lens
        return seen is not None and seen.logits is entry.run.logits
    return _valid(entry, v.cursor - 1) is not None


def side(entry: Entry | None):
    """The panel in a click's answer: drawn while it is open, left as it is (nothing sent) while it is closed."""
    if entry is None or not entry.view.lens_on:
        return gr.skip()
    return draw(entry).html()


def opened(entry: Entry) -> bool:
    """The panel opens (the caller holds `entry`): the run reads a lens with each distribution from now on, and a
    stopped run its curve over every step. Returns whether the chart's distribution lacks its lens: the caller then
    shows the pending distribution again, read with it."""
    entry.view.lens_on = True
    after_step(entry)
    return not _shows_lens(entry)


def closed(run_id) -> None:
    """The panel closes: no more lens passes."""
    try:
        entry = STORE.runs.get(run_id)
    except ValueError:  # freed: the next Prefill starts afresh
        return
    if entry is not None:
        with entry.lock:
            entry.view.lens_on = False
