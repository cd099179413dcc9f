"""What every tab shares: the app's model settings, the shared model, and the prompt formats.

The model is loaded once per (id, device, dtype) and shared read-only by every session; the events that run it
are wired with `ui.events.model_event`.
"""

from dataclasses import dataclass

from decoding.models import BUNDLED, LoadedModel, ModelLoadError, allowed_models, load_model

# the "Prompt format" choices of the step and beam tabs: the text as typed, or one user turn in the chat template
RAW, CHAT = "raw text", "chat template"


@dataclass(frozen=True)
class AppConfig:
    model_id: str = BUNDLED
    device: str = "auto"
    dtype: str | None = None


def get_model(config: AppConfig, model_id: str | None = None) -> LoadedModel:
    """The shared model for `model_id` (default: the app's); raises gr.Error with a clear message."""
    import gradio as gr

    model_id = model_id or config.model_id
    if model_id not in allowed_models():
        raise gr.Error(f"model {model_id!r} is not available here; choose one of {', '.join(allowed_models())}")
    try:
        return load_model(model_id, config.device, config.dtype)
    except (ModelLoadError, ValueError) as err:
        raise gr.Error(str(err)) from None
