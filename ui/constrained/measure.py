"""The constrained tab's measurement: the same prompt N times, seeded, without and then with the constraint, taking
its turn on the model between the scheduler's ticks. Cancel stops it before its next forward pass (a flag the
sampling loop reads, `ui.events.CancelFlags`), and the page says how far it got."""

from typing import Any, NamedTuple

import gradio as gr

from decoding import values
from decoding.constrained.measure import MAX_SAMPLES, compare
from ui.constrained.handlers import Controls, sampler_settings, started
from ui.context import AppConfig, model_turn, pass_turn
from ui.events import PROGRESS, CancelFlags
from visuals.constrained import views as draw
from visuals.theme import empty_figure

MEASURE_BLANK = "Press Sample: the same prompt N times without, then with the constraint"
CANCEL = CancelFlags()


class Measured(NamedTuple):
    """The N-samples measurement's outputs by name."""

    plot: Any
    text: Any


def measure(config: AppConfig, controls: Controls, n, request: gr.Request = None, progress=PROGRESS) -> Measured:
    """N seeded samples without and with the constraint: validity, log-probabilities, the mask's cost."""
    settings = sampler_settings(config, controls)
    s = started(config, controls)
    n = values.whole("Samples", n, 1, MAX_SAMPLES)
    watch = CANCEL.watch(request, progress, between_passes=pass_turn(s.lm))
    with model_turn(s.lm, "the constrained samples"):
        result = compare(
            s.lm, s.prompt, s.constraint, settings, n=n, seed=s.seed, max_new_tokens=s.max_new, watch=watch
        )
    said = draw.cancelled_note(result, n) if result.cancelled else ""
    if said:
        gr.Warning(said)
    if not result.constrained:
        return Measured(plot=empty_figure(MEASURE_BLANK, 300), text=f"**{said}**")
    head = f"{s.lm.label} · {s.lm.device} · {s.lm.dtype_name} · {n} seeds from {s.seed} · {settings.order} order\n\n"
    return Measured(
        plot=draw.comparison_figure(result),
        text=(f"**{said}**\n\n" if said else "") + head + draw.comparison_markdown(result),
    )
