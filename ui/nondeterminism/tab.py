"""The "Temperature 0 & batching" tab: the same prompt, greedy, alone and as row 0 of bigger batches.

Layout and one line of wiring per event; the handlers are in ui/nondeterminism/handlers.py, the sentences under the
charts in visuals/nondeterminism/captions.py.
"""

from dataclasses import dataclass, replace

import gradio as gr

from decoding.nondeterminism.batchmates import CONDITIONS, DTYPE_NAMES, MAX_NEW_TOKENS
from decoding.nondeterminism.experiment import DEFAULTS
from ui.context import AppConfig, quoting_steps
from ui.events import PROGRESS, message_line, model_event
from ui.group import Group
from ui.lesson import lesson, style, try_this
from ui.nondeterminism import handlers as h
from ui.tabs import TabSpec
from ui.validate import knob_slider
from visuals.glossary import term
from visuals.nondeterminism import batches as vis
from visuals.nondeterminism.tally import tally_figure

LESSON = (
    "Temperature 0 can still write another text: batched with others, a prompt's sums round differently, and a "
    f"near-tie's {term('argmax')} flips."
)
INTRO = """\
Greedy decoding takes the argmax, so the same prompt "should" always give the same text. It does not once requests
are batched: the batch changes the shapes the kernels see, sums round a little differently, and where the top two
tokens were nearly tied the argmax flips. Here one prompt is decoded alone and as row 0 of bigger batches, compared
bit for bit."""
TRY_THIS = f"""\
1. Press **Run** with the defaults (padded batchmates, bfloat16; under a minute on a CPU): how far did the
   batch move row 0's {term("logit", "logits")} (**noise**), and did any batch write another text? (Which do depends
   on the CPU's kernels.)
2. Where a batch wrote another text, in **Side by side** find the highlighted token: the first that differs from solo;
   struck = what solo wrote. Where none did, every {term("top-1")}/top-2 gap stayed wider than twice the noise.
3. On the **gap vs noise** scatter, a ★ marks a flip: its top-1/top-2 gap was under twice the noise (below the line).
4. In **The fix**, batch-invariant mode gives the solo text everywhere with noise exactly 0; read what it cost.
5. Under **More settings**, switch to **same-length** and Run: nothing to pad, only the batch size changes the
   kernels. Where is the noise exactly 0, and does a token still flip? Then pick **float32** and Run: the noise falls
   to about 1e-4 or less.
6. Press **Many runs**: three prompts, each alone and with batchmates; how many different texts did greedy write?
"""
CONDITION_CHOICES = [
    ("same-length: copies of the prompt — only the batch size changes", "same-length"),
    ("padded: other prompts of other lengths, left-padded", "padded"),
]
assert {v for _, v in CONDITION_CHOICES} == set(CONDITIONS)


@dataclass(frozen=True)
class Controls(Group):
    """What the experiment is asked, as one value; each field is named as `handlers.checked`'s argument."""

    prompt: gr.Textbox
    condition: gr.Radio
    dtype: gr.Radio
    sizes: gr.CheckboxGroup
    new_tokens: gr.Slider


@dataclass(frozen=True)
class BatchingPage:
    controls: Controls
    invariant: gr.Checkbox
    run_btn: gr.Button
    many_btn: gr.Button
    cancel_btn: gr.Button
    message: gr.HTML
    view: h.LabView  # of components
    tally: h.TallyView  # of components


def layout(config: AppConfig) -> BatchingPage:
    """The tab's components, inside the caller's gr.Tab. `config` is unused: nothing runs at layout."""
    style(vis.CSS, "nondeterminism-css")
    lesson(
        LESSON,
        "Temperature 0 & batching",
        first="**Start here:** press **Run**: the same prompt alone and in batches, side by side.",
    )
    with gr.Row(equal_height=False):
        with gr.Accordion("Why a batch changes greedy's text", open=False, elem_id="nondeterminism-how"):
            gr.Markdown(INTRO)
        # the tab runs in the dtype it is asked for, whatever the app's: the numbers depend on the model and weights
        try_this(quoting_steps(TRY_THIS, replace(config, dtype="float32")), 6, "nondeterminism-try")
    with gr.Row():
        with gr.Column(scale=3):
            prompt = gr.Textbox(
                DEFAULTS["prompt"], label="Prompt", lines=1, info="row 0 of every batch; the solo run decodes it alone"
            )
            with gr.Row():
                run_btn = gr.Button("Run", variant="primary", elem_id="nondeterminism-run")
                many_btn = gr.Button("Many runs", elem_id="nondeterminism-many")
                cancel_btn = gr.Button("Cancel", variant="stop")
            message = message_line("nondeterminism-message")
            gr.Markdown(
                "**Run**: solo vs each batch, token by token. **Many runs**: several prompts × your batch sizes × "
                "both conditions, distinct completions counted (a few times longer than Run).",
                elem_classes="hint",
            )
        with gr.Column(scale=2):
            sizes, condition, dtype, new_tokens, invariant = _settings()
    controls = Controls(prompt=prompt, condition=condition, dtype=dtype, sizes=sizes, new_tokens=new_tokens)
    return BatchingPage(
        controls=controls,
        invariant=invariant,
        run_btn=run_btn,
        many_btn=many_btn,
        cancel_btn=cancel_btn,
        message=message,
        view=_views(),
        tally=_tally(),
    )


def _settings() -> tuple[gr.CheckboxGroup, gr.Radio, gr.Radio, gr.Slider, gr.Checkbox]:
    """The right-hand column: the batch sizes, the knob the lesson is about; then, in "More settings", the batchmates,
    precision, new tokens, and whether to run the fix too."""
    sizes = gr.CheckboxGroup(
        h.BATCH_CHOICES,
        label="Batch sizes",
        elem_id="nondeterminism-sizes",
        value=[b for b in DEFAULTS["batch_sizes"] if b in h.BATCH_CHOICES],
        info="each is compared with the prompt alone (batch 1); 32 is slow on a CPU",
    )
    with gr.Accordion("More settings", open=False, elem_id="nondeterminism-more"):
        condition, dtype, new_tokens, invariant = _more_settings()
    return sizes, condition, dtype, new_tokens, invariant


def _more_settings() -> tuple[gr.Radio, gr.Radio, gr.Slider, gr.Checkbox]:
    condition = gr.Radio(
        CONDITION_CHOICES,
        value=DEFAULTS["condition"],
        label="Batchmates (condition)",
        elem_id="nondeterminism-condition",
        info="two causes kept apart: the kernels' batch shapes alone, or with padding too",
    )
    dtype = gr.Radio(
        list(DTYPE_NAMES),
        value=DEFAULTS["dtype"],
        label="Precision (dtype)",
        elem_id="nondeterminism-dtype",
        info="the model's weights and activations; fewer bits, bigger rounding steps",
    )
    # a knob slider: a typed value out of range reaches the handler's check, which names the control
    new_tokens = knob_slider(
        1,
        MAX_NEW_TOKENS,
        DEFAULTS["new_tokens"],
        step=1,
        label="New tokens",
        # one line beside the number box, in projector mode's type too: on two, they pushed the noise chart below the
        # screen after Run (1280x720)
        info="greedy steps, exactly this many in every run",
        elem_id="nondeterminism-new-tokens",
    )
    invariant = gr.Checkbox(
        DEFAULTS["invariant"],
        label="Batch-invariant mode too",
        info="also run every batch with batch-1 shapes: the fix, and what it costs",
    )
    return condition, dtype, new_tokens, invariant


def _views() -> h.LabView:
    """Below the controls: a Run's headline, texts, charts and the fix, each with its caption."""
    empty = h.empty_views()
    headline = gr.Markdown(empty.headline, elem_id="nondeterminism-headline")
    # the texts beside the first chart: after Run, the button and the chart share one screen (1280x720)
    with gr.Row():
        with gr.Column(min_width=380):
            gr.Markdown("### Side by side")
            texts = gr.HTML(empty.texts, elem_id="nondeterminism-texts")
            texts_note = gr.Markdown(elem_classes="hint")
        with gr.Column(min_width=380):
            gr.Markdown(f"### How far the {term('logit', 'logits')} moved")
            noise = gr.Plot(empty.noise, show_label=False, elem_id="nondeterminism-noise")
            noise_note = gr.Markdown(elem_classes="hint", elem_id="nondeterminism-noise-note")
    gr.Markdown(f"### Why a token flips: the {term('top-1')}/top-2 gap against the noise")
    scatter = gr.Plot(empty.scatter, show_label=False, elem_id="nondeterminism-scatter")
    scatter_note = gr.Markdown(elem_classes="hint")
    causes = gr.Markdown(empty.causes)
    gr.Markdown("### The fix: batch-invariant mode")
    fix = gr.HTML(elem_id="nondeterminism-fix")
    fix_note = gr.Markdown(empty.fix_note, elem_id="nondeterminism-fix-note")
    return h.LabView(
        headline=headline,
        texts=texts,
        texts_note=texts_note,
        noise=noise,
        noise_note=noise_note,
        scatter=scatter,
        scatter_note=scatter_note,
        causes=causes,
        fix=fix,
        fix_note=fix_note,
    )


def _tally() -> h.TallyView:
    gr.Markdown("### Many runs: how many different texts does greedy give?")
    tally = gr.Plot(tally_figure([]), show_label=False, elem_id="nondeterminism-tally")
    tally_note = gr.Markdown(elem_classes="hint", elem_id="nondeterminism-tally-note")
    return h.TallyView(tally=tally, tally_note=tally_note)


def wire(c: BatchingPage, config: AppConfig) -> None:
    def run(given: dict, progress=PROGRESS, request: gr.Request = None) -> dict:
        view = h.run_lab(config, given[c.invariant], progress, request, **c.controls.read(given))
        return {} if view is None else dict(zip(c.view, view))

    def many(given: dict, progress=PROGRESS, request: gr.Request = None) -> dict:
        tally = h.many(config, progress, request, **c.controls.read(given))
        return {} if tally is None else dict(zip(c.tally, tally))

    inputs = {*c.controls}
    model_event(c.run_btn.click, run, {*inputs, c.invariant}, list(c.view), message=c.message)
    model_event(c.many_btn.click, many, inputs, list(c.tally), message=c.message)
    h.CANCEL.wire(c.cancel_btn)


def build(config: AppConfig) -> None:
    wire(layout(config), config)


SPEC = TabSpec(
    "Temperature 0 & batching",
    "nondeterminism",
    50,
    build,
    main="#nondeterminism-run",
    chart="#nondeterminism-noise",
    try_this="#nondeterminism-try",
    old_ids=("batching",),  # its id in links until the ids became the packages' names
    summary="greedy is not deterministic once requests are batched: why, and the batch-invariant fix.",
)
