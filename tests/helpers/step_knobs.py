"""The step tab's knobs as its handlers receive them, every stage off (temperature 1: plain sampling), and the app
config that serves the tiny model: what the handler tests start from."""

from decoding.models import TINY
from ui.context import AppConfig

CONFIG = AppConfig(model_id=TINY, device="cpu")
KNOBS = {
    "temperature": 1.0,
    "top_k": 0,
    "top_p": 1.0,
    "min_p": 0.0,
    "repetition_penalty": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "order": "transformers",
}


def page(knobs=KNOBS, mode: str | None = None, **panels) -> str:
    """The page's box (ui/step/page_state.py) as a step tab click sends it: these knobs and this mode, the panels
    as given (by default "each strategy alone" open, its place on screen not said, the lens closed)."""
    from ui.step.page_state import written
    from visuals.distribution import MODES

    return written(knobs, mode or MODES[0], **panels)
