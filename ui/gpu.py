"""The measurements that want a GPU: plain data in, plain data out, wherever the GPU is.

On a ZeroGPU Space the GPU exists only inside a `spaces.GPU` call, and each call runs in a forked worker process
with its arguments and its result pickled across (spaces 0.51, `zero/wrappers.py`). A session's run, a KV cache, a
model or a tensor must never cross that boundary: the worker's copy of the session store is not the server's, and
a CUDA tensor in a result hangs the call. So a measurement is a `Job`: a module-level function (pickled by its
name), plain arguments, and the model named by its settings. In the worker it loads its own copy of that model on
its GPU, measures, and returns the measurement's plain result. Everywhere else (a laptop, CPU basic, a dedicated
GPU) the same job runs in the server process on the app's shared model, taking its turn between the scheduler's
ticks. Cancel reaches a worker through a file (`ui.events.CancelFlags.file_for`).

Everything stateful (Step, beams, speculative, constrained, the lens, the scheduler) runs in the server process on
every host; on ZeroGPU that is the Space's CPU, and the page says so through each run's device label.
"""

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from decoding import memory
from decoding.models import load_in_worker
from decoding.timing.limits import device_name
from decoding.watch import Cancelled, Watch
from ui.context import AppConfig, get_model, model_turn, pass_turn


def _on_zerogpu() -> bool:
    """A ZeroGPU Space: the `spaces` package is there and says so (it is installed on every Space, where its
    decorator does nothing off ZeroGPU)."""
    try:
        import spaces  # noqa: F401
    except ImportError:
        return False
    return os.environ.get("SPACES_ZERO_GPU", "").lower() in ("1", "t", "true")


ZEROGPU = _on_zerogpu()
NO_CANCEL = ""  # the cancel file of a job with no Cancel button: no such path ever exists


def measured_where(lm) -> str:
    """The name a kept measurement is filed under: this server's device, or on ZeroGPU the worker's GPU (never the
    server's CPU model, which the measurement does not run on)."""
    return "ZeroGPU" if ZEROGPU else device_name(lm.device)


@dataclass(frozen=True)
class Job:
    """One measurement, as plain data: on ZeroGPU all of it is pickled into a forked worker."""

    measure: Callable[..., Any]  # a module-level function: measure(lm, *args, watch=watch) -> plain data
    args: tuple
    model: AppConfig  # which model to measure: its id, dtype and weights (the device is wherever the job runs)
    cancel_file: str  # exists once the person presses Cancel (ui.events.CancelFlags.file_for); NO_CANCEL: none
    seconds: int  # ZeroGPU reserves the GPU for about this long: an estimate, not a limit we enforce


@dataclass(frozen=True)
class Outcome:
    """What comes back from a job: its value, or why there is none (plain data, as the job)."""

    value: Any = None
    error: str | None = None  # a ValueError's message: it names the bad value, and the person reads it
    cancelled: bool = False


def run(config: AppConfig, job: Job, progress, label: str, exclusive: bool = False, eta_s: float | None = None):
    """Run `job` where the GPU is and return its value; raise ValueError (its message) or Cancelled as it did.

    Off ZeroGPU it takes its turn on the app's model (`label`, `exclusive` and `eta_s` as for `model_turn`) and
    reports to `progress`; on ZeroGPU it runs in a worker that has the GPU to itself."""
    if ZEROGPU:
        outcome = _on_gpu(job)
    else:
        app_model = get_model(config)

        def report(fraction, message):
            progress(fraction, desc=message)

        try:
            with model_turn(app_model, label, exclusive, eta_s):
                outcome = execute(job, get_model(job.model), report, pass_turn(app_model))
        finally:  # what the measurement built and freed, back to the machine (decoding/memory.py), the turn passed on
            memory.give_back()
    if outcome.error is not None:
        raise ValueError(outcome.error)
    if outcome.cancelled:
        raise Cancelled("measurement cancelled")
    return outcome.value


def execute(job: Job, lm, report: Callable[[float, str], None], between_passes: Callable[[], None]) -> Outcome:
    """Run the measurement on `lm`, stopping at the forward pass after Cancel; errors and Cancel become data."""

    def cancelled() -> bool:
        return os.path.exists(job.cancel_file)

    watch = Watch(on_progress=report, should_stop=cancelled, between_passes=between_passes)
    try:
        return Outcome(value=job.measure(lm, *job.args, watch=watch))
    except Cancelled:
        return Outcome(cancelled=True)
    except ValueError as err:
        return Outcome(error=str(err))


def in_worker(job: Job) -> Outcome:
    """The body of a GPU call, in the worker: this worker's own copy of the model, on the device it has ("auto":
    the GPU on ZeroGPU). The progress bar is gradio's for the calling event (spaces forwards its updates)."""
    lm = load_in_worker(job.model.model_id, job.model.dtype, job.model.weights)
    progress = gr.Progress()

    def report(fraction, message):
        progress(fraction, desc=message)

    return execute(job, lm, report, lambda: None)


def _gpu_seconds(job: Job) -> int:
    return job.seconds


def gpu_call(spaces_module):
    """`in_worker` as a GPU call of `spaces_module` (the real package on a Space, a stand-in in tests)."""
    return spaces_module.GPU(in_worker, duration=_gpu_seconds)


if ZEROGPU:
    import spaces

    _on_gpu = gpu_call(spaces)
else:
    _on_gpu = in_worker
