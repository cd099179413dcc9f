"""How a tab wires an event: the one queue for the model, the GPU request, errors that teach, and Cancel.

Every event that runs the model goes through `model_event`, so how model events queue is written once, in
`MODEL_EVENT`: today one queue with one worker, so two people never run the model at the same time and timings
are not disturbed by another user's work. A scheduler that batches sessions' steps changes that one dict.
"""

import inspect
import os
import threading
from functools import wraps

import gradio as gr

from decoding.watch import Watch

PROGRESS = gr.Progress()  # the default of a handler's `progress` argument: gradio fills it in for that handler
MODEL_QUEUE = "model"

try:  # on a ZeroGPU Space, functions that run the model must ask for the GPU
    import spaces

    gpu, ZEROGPU = spaces.GPU, True
except ImportError:
    ZEROGPU = False

    def gpu(fn=None, **_):
        return fn if fn is not None else (lambda f: f)


# the options of every model event. With the shared scheduler (decoding.serving) many run at once: their steps
# are batched into the scheduler's ticks and everything else takes turns on the model. On ZeroGPU the GPU exists
# only inside each `spaces.GPU` call, so there each event runs on its own, one at a time.
BATCHING = not ZEROGPU and os.environ.get("DECODING_LAB_BATCHING", "1") != "0"
CONCURRENT_MODEL_EVENTS = 64 if BATCHING else 1
MODEL_EVENT = {"concurrency_id": MODEL_QUEUE, "concurrency_limit": CONCURRENT_MODEL_EVENTS}


def teach(fn):
    """Turn the engine's ValueErrors (they name the value and the allowed range) into messages in the browser."""
    if inspect.isgeneratorfunction(fn):

        @wraps(fn)
        def generator(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except ValueError as err:
                raise _message(err) from None

        return generator

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ValueError as err:
            raise _message(err) from None

    return wrapper


def _message(err: ValueError) -> gr.Error:
    # gr.Error is itself a ValueError, and its str() is a repr: pass it on as it is, or the message shows quotes
    return err if isinstance(err, gr.Error) else gr.Error(str(err))


def model_event(triggers, fn, inputs=None, outputs=None, *, gpu_s: int | None = None, **options):
    """Wire `fn` to run the model when a trigger fires: in the model queue, on the GPU (for up to `gpu_s` seconds
    on ZeroGPU) and with its ValueErrors shown to the person. `triggers` is one listener (`button.click`) or a
    list of them (as for `gr.on`); returns the event, for `.then` and `cancels`."""
    handler = gpu(teach(fn), duration=gpu_s) if gpu_s else gpu(teach(fn))
    options = {**MODEL_EVENT, **options}
    if isinstance(triggers, (list, tuple)):
        return gr.on(triggers, handler, inputs, outputs, **options)
    return triggers(handler, inputs, outputs, **options)


class CancelFlags:
    """One "stop please" flag per browser session: the tab's Cancel button sets it, the running work's Watch
    reads it before each forward pass. One instance per tab, so Cancel stops only that tab's work."""

    def __init__(self):
        self._flags: dict[str, threading.Event] = {}

    def watch(self, request: gr.Request | None, progress: gr.Progress, between_passes=None) -> Watch:
        """A Watch for this session's new run (its flag cleared) that reports to the progress bar; between two
        forward passes it calls `between_passes` (to let other sessions use the model)."""
        flag = self._flag(request)
        flag.clear()
        return Watch(lambda f, msg: progress(f, desc=msg), flag.is_set, between_passes or (lambda: None))

    def cancel(self, request: gr.Request = None) -> None:
        self._flag(request).set()

    def wire(self, button: gr.Button):
        """The Cancel button: it skips the model queue, or it would wait behind the run it should stop."""
        return button.click(self.cancel, concurrency_limit=None, show_progress="hidden")

    def _flag(self, request: gr.Request | None) -> threading.Event:
        session = getattr(request, "session_hash", None) or "default"
        return self._flags.setdefault(session, threading.Event())
