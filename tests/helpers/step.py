"""The step tab's test setup: the app's config on the tiny model, and greedy as the page's knobs hold it."""

from decoding.models import TINY
from ui.context import AppConfig

CONFIG = AppConfig(model_id=TINY, device="cpu")
# the penalties off and the transformers order, as the page's knobs hold them
OFF = {"repetition_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0, "order": "transformers"}
GREEDY = {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, **OFF}
