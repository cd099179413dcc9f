"""What every tab shares: the app's model settings, the shared model, and the prompt formats.

The model is loaded once per (id, device, dtype) and shared read-only by every session; the events that run it
are wired with `ui.events.model_event`.
"""

import contextlib
import os
from dataclasses import dataclass

from decoding.models import (
    BUNDLED,
    LoadedModel,
    ModelLoadError,
    allowed_models,
    load_model,
    resolve_device,
    resolve_dtype,
)
from decoding.quantization.formats import get_format
from decoding.quantization.linear import SIMULATED
from decoding.quantization.model import default_kernel
from decoding.serving import scheduler as serving
from decoding.serving.students import SimulatedClass
from ui.events import BATCHING
from ui.sessions import STORE

# which app process of a lecture hall this is ("2/4", set by deploy/hall.py; empty for the one-process server): the
# pages that show a server's own traffic name it, as the class's other students step on the other replicas
REPLICA = os.environ.get("DECODING_LAB_REPLICA", "")


def this_server(replica: str = REPLICA) -> str:
    """Which server a page's numbers are from, in words ("this server, 2 of 4"); "" for a server on its own."""
    if not replica:
        return ""
    index, _, count = replica.partition("/")
    return f"this server, {index} of {count}" if count else f"this server, {index}"


# the "Prompt format" choices of the step and beam tabs: the text as typed, or one user turn in the chat template
RAW, CHAT = "raw text", "chat template"


@dataclass(frozen=True)
class AppConfig:
    model_id: str = BUNDLED
    device: str = "auto"
    dtype: str | None = None
    weights: str = "float32"  # the weight format every tab's model serves (--weights)


# the run every number a lesson's text quotes was measured on, and the browser tests check them on: the bundled model
# with its float32 weights, in float32 on a CPU (AppConfig's defaults on a machine without CUDA)
MEASURED_RUN = (BUNDLED, "cpu", "float32", "float32")  # model, device, dtype, weights
MEASURED_ON = "the bundled SmolLM2-135M-Instruct in float32 on a CPU"


def run_of(config: AppConfig) -> tuple[str, str, str, str]:
    """What a run's numbers depend on: its model, device type, dtype and weight format, as resolved on this machine."""
    device = resolve_device(config.device)
    return config.model_id, device.type, str(resolve_dtype(config.dtype, device)).removeprefix("torch."), config.weights


def measured_on(config: AppConfig) -> str:
    """What a lesson's text that quotes measured numbers says first: nothing on the run they were measured on, else
    that run named ("Measured on the bundled SmolLM2-135M-Instruct in float32 on a CPU, not on this run:"), so no one
    reads them as this run's. `config`: the run the tab's numbers come from."""
    if run_of(config) == MEASURED_RUN:
        return ""
    return f"Measured on {MEASURED_ON}, not on this run:"


def quoting(text: str, config: AppConfig) -> str:
    """One sentence or line that quotes measured numbers, led by `measured_on` where this run is another."""
    return f"{measured_on(config)} {text}".strip()


def quoting_steps(steps_markdown: str, config: AppConfig) -> str:
    """A "Try this" walk-through that quotes measured numbers, `measured_on` its first paragraph where this run is
    another."""
    note = measured_on(config)
    return f"*{note}*\n\n{steps_markdown}" if note else steps_markdown


def weights_note(config: AppConfig) -> str:
    """The page header's line on the weights every tab serves (--weights), and how they run on this device."""
    if config.weights == "float32":
        return "Weights: **float32** (the default)."
    fmt = get_format(config.weights)
    kernel = default_kernel(fmt, resolve_device(config.device))
    how = "simulated: rounded weights, float32 compute, no speed-up" if kernel == SIMULATED else f"kernel {kernel}"
    return f"Weights: **{fmt.label}** ({how})."


def get_model(config: AppConfig, model_id: str | None = None) -> LoadedModel:
    """The shared model for `model_id` (default: the app's); raises gr.Error with a clear message."""
    import gradio as gr

    model_id = model_id or config.model_id
    if model_id not in allowed_models():
        raise gr.Error(f"model {model_id!r} is not available here; choose one of {', '.join(allowed_models())}")
    try:
        return load_model(model_id, config.device, config.dtype, config.weights)
    except (ModelLoadError, ValueError) as err:
        raise gr.Error(str(err)) from None


def scheduler_for(lm: LoadedModel) -> serving.Scheduler | None:
    """The scheduler that batches every session's steps on this model; None on ZeroGPU (the GPU exists only inside
    each request there), with DECODING_LAB_BATCHING=0, or for a model whose attention cannot be packed: then each
    request runs the model on its own, one at a time."""
    if not BATCHING:
        return None
    try:
        scheduler = serving.scheduler_for(lm)
    except ValueError:
        return None
    STORE.share(scheduler.prefix)  # its prompt blocks count under the sessions' one KV cap
    return scheduler


def model_turn(lm: LoadedModel, label: str, exclusive: bool = False, eta_s: float | None = None):
    """`with model_turn(lm, "beam search"):` for model work that is not a session's step: it waits its turn
    between the scheduler's ticks (a no-op where there is no scheduler)."""
    scheduler = scheduler_for(lm)
    return contextlib.nullcontext() if scheduler is None else scheduler.turns.turn(label, exclusive, eta_s)


def pass_turn(lm: LoadedModel):
    """What a long job calls between its forward passes (Watch.between_passes) so steps can go in between."""
    scheduler = scheduler_for(lm)
    return (lambda: None) if scheduler is None else scheduler.turns.pass_turn


_CLASSES: dict[int, SimulatedClass] = {}


def simulated_class(scheduler: serving.Scheduler) -> SimulatedClass:
    """The server's one class of simulated students on this scheduler."""
    if id(scheduler) not in _CLASSES:
        _CLASSES[id(scheduler)] = SimulatedClass(scheduler)
    return _CLASSES[id(scheduler)]
