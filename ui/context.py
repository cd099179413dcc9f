"""What every tab shares: the app's model settings, the one queue for the model, and the GPU wrapper.

The model is loaded once per (id, device, dtype) and shared read-only by every session. Everything that
runs it goes through one queue (`MODEL_QUEUE`), so two people never run the model at the same time
and timings are not disturbed by another user's work.
"""

from dataclasses import dataclass

from decoding.models import BUNDLED, LoadedModel, ModelLoadError, allowed_models, load_model

MODEL_QUEUE = "model"

try:  # on a ZeroGPU Space, functions that run the model must ask for the GPU
    import spaces

    gpu = spaces.GPU
except ImportError:

    def gpu(fn=None, **_):
        return fn if fn is not None else (lambda f: f)


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
