"""The step tab's test setup: the app's config on the tiny model, and greedy as the page's knobs hold it."""

from decoding.models import TINY
from ui.context import AppConfig

CONFIG = AppConfig(model_id=TINY, device="cpu")
# the penalties off and the transformers order, as the page's knobs hold them
OFF = {"repetition_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0, "order": "transformers"}
GREEDY = {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, **OFF}


def more_settings(page, lesson: str = "step") -> None:
    """Open the lesson's "More settings" (`#<lesson>-more`) if it is closed; a preset or a link may have opened it."""
    title = page.locator(f"#{lesson}-more .label-wrap").first
    if "open" not in (title.get_attribute("class") or ""):
        title.click()
    page.locator(f"#{lesson}-more .label-wrap.open").first.wait_for()
