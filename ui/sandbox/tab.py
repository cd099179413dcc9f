"""The "Sampler sandbox" tab: type logits (or pick a preset) and see what every sampler keeps, how
temperature changes what top-p and min-p keep, and where the engines' stage orders disagree.
No model runs here, so nothing goes through the model queue."""

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import NamedTuple

import gradio as gr

from decoding.knobs import KNOBS, settings_from
from decoding.sandbox import (
    MAX_VOCAB,
    PRESETS,
    compare_orders,
    each_strategy_alone,
    parse_logits,
    temperature_sweep,
)
from decoding.stages import MIN_P, TEMPERATURE, TOP_K, TOP_P, Stage
from ui.events import FOLLOWS, message_line, teach
from ui.group import Group
from ui.lesson import lesson, try_this
from ui.links import preset_in_link, query_of
from ui.opened import FirstOpen
from ui.strategy_code import code_view
from ui.tabs import TabSpec
from ui.validate import knob_slider
from visuals.glossary import term
from visuals.sandbox.views import describe_sweep, orders_table, sweep_figure
from visuals.strategies import strategies_figure

LESSON = (
    f"Top-k, top-p and min-p each cut the same {term('logit', 'logits')} differently, and temperature changes what "
    "they keep (no model here: logits you type)."
)
TRY_THIS = f"""No model here: these are logits you type, one per token of a made-up vocabulary.
1. The **reference exercise** is loaded: logits 10, 9.9, 9.8, 5, 4 and 31,995 more at 0. Before you look: how many
   tokens does top-p 0.9 keep? Now read the **top-p** panel's title, and its **rest** bar.
2. Compare the **min-p** panel: its floor is 10% of the top token's probability, so it keeps only the top three.
3. In the logits box change `31995` to `95` and press Enter: with a short tail, top-p keeps 3 as well.
4. Pick the exercise again and read the **sweep**: as temperature rises, top-p's count climbs; min-p's stays small.
5. Pick **two-way tie**, temperature 1.5: the **{term("engine order", "engine orders")}** table shows transformers and
   vLLM keep different tokens.
"""
REFERENCE = """**What the references say.** "Top-p degrades silently at high temperatures. As temperature increases,
token probabilities become more uniform, so top-p admits increasingly many low-quality tokens. Min-p adapts its
threshold to the top token's probability, fixing this." One of them poses the exercise: top five logits
[10, 9.9, 9.8, 5, 4], the rest of 32,000 "around 0" (here exactly 0): "predict what top_p(logits, p=0.9) keeps.
Verify by running it."
"""
PANELS_NOTE = """Each panel applies **one** strategy to the same logits (temperature 1 for the truncations). Bars: the
model's probability of the 20 most likely tokens, then **rest** = every other token together; hatched and pale =
removed; the grey dash = the probability that strategy alone would sample it with. *(usual value)* = your setting is
off, so the panel shows the common value."""
# the reference exercise as posed: temperature and top-k off, top-p and min-p at their usual values (0.9 and 0.1)
DEFAULTS = {
    "preset": "reference exercise",
    TEMPERATURE.field: TEMPERATURE.neutral,
    TOP_K.field: TOP_K.neutral,
    TOP_P.field: TOP_P.usual,
    MIN_P.field: MIN_P.usual,
}


class SandboxView(NamedTuple):
    """What the sandbox draws; the tab holds one of its components, so outputs go by name."""

    strategies: object
    sweep: object
    measured: str
    orders: str


def sandbox_view(text: str, knobs: Mapping[str, object]) -> SandboxView:
    """Logits text and the knobs' values (keyed by `SamplerSettings` field) -> what the tab draws of them."""
    try:
        logits = parse_logits(text)
    except ValueError as err:
        raise ValueError(f"logits: {err}".replace("`", '"')) from None
    # the knobs' own ranges, as on every tab: the panels show the top 20 tokens, so a top-k past the slider adds nothing
    settings = settings_from(knobs)
    sweep = temperature_sweep(logits)
    return SandboxView(
        strategies=strategies_figure(each_strategy_alone(logits, settings)),
        sweep=sweep_figure(sweep),
        measured=f"**Measured here.** {describe_sweep(sweep)}",
        orders=orders_table(compare_orders(logits, settings)),
    )


@dataclass(frozen=True)
class SandboxKnobs(Group):
    """The sandbox's settings as one value; each field is named as the `SamplerSettings` field it sets."""

    temperature: gr.Slider
    top_k: gr.Slider
    top_p: gr.Slider
    min_p: gr.Slider


@dataclass(frozen=True)
class SandboxPage:
    logits: gr.Textbox
    preset: gr.Dropdown
    knobs: SandboxKnobs
    message: gr.HTML
    view: SandboxView  # of components


def _slider(stage: Stage, **kwargs) -> gr.Slider:
    """A stage's slider, labelled as its charts name it, its range and step from decoding.knobs; a typed value out of
    range reaches the check."""
    knob = KNOBS[stage.field]
    return knob_slider(
        knob.lo, knob.hi, DEFAULTS[stage.field], step=knob.step, label=stage.label, min_width=260, **kwargs
    )


def _knobs() -> SandboxKnobs:
    return SandboxKnobs(
        temperature=_slider(
            TEMPERATURE,
            elem_id="sandbox-temperature",
            info="divides the logits (< 1 sharpens); 0 = greedy. Usual 0.7–1",
        ),
        top_k=_slider(
            TOP_K,
            elem_id="sandbox-topk",
            info="keep the k most likely (ties kept); 0 = off. Usual 40–50",
        ),
        top_p=_slider(
            TOP_P,
            elem_id="sandbox-topp",
            info="keep the most likely until their mass reaches p; 1 = off. Usual 0.9–0.95",
        ),
        min_p=_slider(
            MIN_P,
            elem_id="sandbox-minp",
            info="keep tokens with p ≥ min-p × the top p; 0 = off. Usual 0.05–0.1",
        ),
    )


def layout(config) -> SandboxPage:
    """The sandbox's components, inside the caller's gr.Tab. `config` is unused: no model."""
    first = sandbox_view(PRESETS[DEFAULTS["preset"]], {f.name: DEFAULTS[f.name] for f in fields(SandboxKnobs)})
    lesson(
        LESSON,
        "Sampler sandbox",
        first="**Start here:** move **Temperature**, then top-p: the panels redraw as you move them.",
    )
    try_this(TRY_THIS, 5, "sandbox-try")
    with gr.Row(equal_height=True):
        logits = gr.Textbox(
            PRESETS[DEFAULTS["preset"]],
            label="Logits, one per token (press Enter to apply)",
            # one line in projector mode (the full rule is in each message about a bad entry: decoding.sandbox.FORMAT)
            info=f"numbers like `10, 9.9, 5`; `0 x 100` repeats; `2 to -4 x 50` spaces 50 evenly; 2 to {MAX_VOCAB:,}",
            lines=1,
            max_lines=3,
            scale=3,
            elem_id="sandbox-logits",
        )
        preset = gr.Dropdown(
            list(PRESETS),
            value=DEFAULTS["preset"],
            label="Preset",
            info="confident, flat, a tie or the exercise",
            scale=1,
            elem_id="sandbox-preset",
        )
    with gr.Row():  # four abreast on a wide screen, two by two at 800 px (min_width)
        knobs = _knobs()
    message = message_line("sandbox-message")
    strategies = gr.HTML(
        first.strategies, label="Same logits, each strategy alone", show_label=True, elem_id="sandbox-strategies"
    )
    gr.Markdown(PANELS_NOTE, elem_classes="hint")
    code_view()
    gr.Markdown("### Temperature sweep: top-p 0.9 vs min-p 0.1\n" + REFERENCE)
    measured = gr.Markdown(first.measured, elem_id="sandbox-measured")
    sweep = gr.Plot(first.sweep, show_label=False, elem_id="sandbox-sweep")
    gr.Markdown(f"### {term('engine order', 'Engine orders')}: the same settings, each engine's stage order")
    orders = gr.HTML(first.orders, elem_id="sandbox-orders")
    view = SandboxView(strategies=strategies, sweep=sweep, measured=measured, orders=orders)
    return SandboxPage(logits=logits, preset=preset, knobs=knobs, message=message, view=view)


def wire(c: SandboxPage, config):
    def show(given: dict) -> dict:
        return dict(zip(c.view, sandbox_view(given[c.logits], c.knobs.read(given))))

    def preset_of(text: str):
        # typed logits that match no preset leave the picker empty, so any preset can be picked again
        return next((name for name, logits in PRESETS.items() if logits == text.strip()), None)

    shown = teach(show, c.message)
    inputs, outputs = {c.logits, *c.knobs}, [*c.view, c.message]
    c.preset.input(lambda name: PRESETS[name], c.preset, c.logits, show_progress="hidden", **FOLLOWS).then(
        shown, inputs, outputs, show_progress="hidden"
    )
    c.logits.submit(preset_of, c.logits, c.preset)
    triggers = [c.logits.submit, c.logits.blur, *(knob.change for knob in c.knobs)]
    gr.on(triggers, shown, inputs, outputs, show_progress="hidden", **FOLLOWS)

    def open_link(given: dict, request: gr.Request) -> dict:
        """A shared link's preset (?tab=sandbox&preset=flat), applied as picking it applies it: its logits, drawn."""
        asked = preset_in_link(query_of(request), "sandbox", PRESETS)
        if asked.name is None:
            return {c.message: asked.message}
        logits = PRESETS[asked.name]
        return {c.preset: asked.name, c.logits: logits, **show({**given, c.logits: logits}), c.message: ""}

    def on_load(demo: gr.Blocks, opened: FirstOpen) -> None:
        opened.click(open_link, inputs, [c.preset, c.logits, *outputs], show_progress="hidden", concurrency_limit=None)

    return on_load


def build(config):
    """Lay out the sandbox tab (inside the caller's gr.Tab) and wire its events. `config` is unused: no model.
    Returns the function app.py calls with the page, to apply a shared link's preset as it loads."""
    return wire(layout(config), config)


SPEC = TabSpec(
    "Sampler sandbox",
    "sandbox",
    20,
    build,
    main="#sandbox-temperature",
    chart="#sandbox-strategies",
    try_this="#sandbox-try",
    presets=tuple(PRESETS),
    summary=(
        "type logits or pick a preset and see every sampler's mask; how top-p and min-p behave as the temperature "
        "rises."
    ),
)
