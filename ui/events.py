"""How a tab wires an event: the one queue for the model, errors that teach, and Cancel.

Every event that runs the model goes through `model_event`, so how model events queue is written once, in
`MODEL_EVENT`: many events wait at once, and the shared scheduler (decoding.serving) batches their steps into its
forward passes. Model events run in the server process, on every host, a ZeroGPU Space included: a session's state
never enters a GPU call (ui.gpu runs the measurements that want the GPU, on plain data). A handler's bad values
reach the person through `teach`.
"""

import html
import inspect
import os
import tempfile
import threading
import time
from functools import wraps
from pathlib import Path

import gradio as gr

from decoding.watch import Deadline, Watch
from ui.running import REDRAW_EVERY_S, Pace

PROGRESS = gr.Progress()  # the default of a handler's `progress` argument: gradio fills it in for that handler
MODEL_QUEUE = "model"
# the options of every model event. With the shared scheduler (decoding.serving) many run at once: their steps
# are batched into the scheduler's ticks and everything else takes turns on the model. DECODING_LAB_BATCHING=0 runs
# each request on its own, one at a time (the classroom benchmark's baseline).
BATCHING = os.environ.get("DECODING_LAB_BATCHING", "1") != "0"
CONCURRENT_MODEL_EVENTS = 64 if BATCHING else 1
MODEL_EVENT = {"concurrency_id": MODEL_QUEUE, "concurrency_limit": CONCURRENT_MODEL_EVENTS}
# A click answered once (no stream, no progress) can skip gradio's queue while batching: the page posts the event
# and reads its answer from the same request (gradio's /run route), where a queued event takes a post to
# queue/join, a turn of the queue's loops and a message on the session's event stream. The scheduler, not gradio's
# queue, decides what runs together, and a session's lock keeps its events in turn. Measured on the 2-core machine,
# thirty Prefills pressed at once: 15.3 -> 11.3 ms of server CPU each, p50 429 -> 291 ms
# (docs/measurements/serving.md). An API client (gradio_client) still posts it to the queue, where it waits in the
# model's queue as before. Without batching the queue stays, as its limit of 1 is what runs them one at a time.
DIRECT_EVENT = {**MODEL_EVENT, "queue": not BATCHING}
# The longest one request may run the model for (Run to end, Run N, Sample N times, a beam or repetition run): past
# it the work stops between two passes, keeps what it did, and says why. A teacher with a quiet server raises it.
REQUEST_S = float(os.environ.get("DECODING_LAB_REQUEST_S", "300"))
# The option of every event that follows a control's value (a knob moved, a preset picked): its last value always
# runs. Gradio's default for any trigger but `.change` is "once", which drops a value that comes while the one before
# is answered: a sandbox slider set back in range as its box lost the focus kept the chart and message of the value
# typed before it (tests/unit/test_follows.py).
FOLLOWS = {"trigger_mode": "always_last"}


def deadline() -> Deadline:
    """The time limit of a request that starts now (`REQUEST_S`, named in the message that stops it)."""
    return Deadline(REQUEST_S, why="one request on this server (DECODING_LAB_REQUEST_S)")


def teach(fn, message=None):
    """The one wrapper for the engine's ValueErrors (they name the value and the allowed range).

    Without `message`, the error becomes a gr.Error toast. With `message` (a component on the page), `fn` returns a
    dict keyed by component; an error is written into `message` alone, every other output keeps what it shows (no
    "Error" badge left on each panel after the toast goes), and a good answer clears the message."""
    if inspect.isgeneratorfunction(fn):

        @wraps(fn)
        def generator(*args, **kwargs):
            try:
                for out in fn(*args, **kwargs):
                    # never an empty dict, which gradio refuses as too few outputs: a run's END ({}) clears the message
                    yield out if message is None else {**out, message: ""}
            except ValueError as err:
                yield _said(err, message)

        return generator

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            out = fn(*args, **kwargs)
        except ValueError as err:
            return _said(err, message)
        return out if message is None else {**out, message: ""}

    return wrapper


def message_line(elem_id: str) -> gr.HTML:
    """A tab's message line, under its buttons: where `teach` says what is wrong; hidden while it is empty."""
    return gr.HTML(elem_id=elem_id, elem_classes=["lab-message"])


def error_html(err: Exception) -> str:
    """A message line's content for `err` (styled by the page's `.lab-error` rule)."""
    return f"<div class='lab-error' role='alert'>{html.escape(str(err))}</div>"


def _said(err: ValueError, message) -> dict:
    if message is None:
        # gr.Error is itself a ValueError, and its str() is a repr: pass it on as it is, or the message shows quotes.
        # A bad value is the person's to fix, not the server's: no traceback in the log (gradio prints one by default)
        if isinstance(err, gr.Error):
            err.print_exception = False
            raise err
        raise gr.Error(str(err), print_exception=False) from None
    return {message: error_html(err)}


def paced(progress, every_s: float = REDRAW_EVERY_S, clock=time.monotonic):
    """`progress(fraction, desc=...)` passed on at most once every `every_s` seconds (the first call always): what a
    run reports for every token or round, drawn as often as a person can follow it."""
    pace = Pace(every_s, clock)

    def report(fraction, desc: str | None = None) -> None:
        if pace.due():
            progress(fraction, desc=desc)

    return report


def stale_while_running(bar: str, *stale: str) -> str:
    """CSS for a long run's outputs: while gradio's full progress bar shows on `bar` (a selector: the element the
    answer appears in, where the bar says how far), every element of `stale` (the old answer's other parts, the old
    message) is dimmed, as the answer before this run. No script: the rule ends with the run's event."""
    busy = f"body:has({bar} [data-testid=status-tracker].full:not(.hide))"
    return f"{busy} :is({', '.join(stale)}) {{ opacity: .35; filter: grayscale(1); }}\n"


def model_event(triggers, fn, inputs=None, outputs=None, *, message=None, direct=False, **options):
    """Wire `fn` to run the model when a trigger fires: in the model queue, in the server process, with its
    ValueErrors shown to the person (in `message`, see `teach`). `triggers` is one listener (`button.click`) or a
    list of them (as for `gr.on`); returns the event, for `.then` and `cancels`. `direct`: a click answered once
    skips gradio's queue (DIRECT_EVENT); a run that streams its views, or reports progress, cannot."""
    if message is not None and outputs is not None and message not in outputs:
        outputs = [*outputs, message]
    if direct and inspect.isgeneratorfunction(fn):
        raise ValueError(f"{fn.__name__} streams its answers: it needs gradio's queue, so it cannot be direct")
    handler = teach(fn, message)
    options = {**(DIRECT_EVENT if direct else MODEL_EVENT), **options}
    if isinstance(triggers, (list, tuple)):
        return gr.on(triggers, handler, inputs, outputs, **options)
    return triggers(handler, inputs, outputs, **options)


class CancelFlags:
    """One "stop please" flag per browser session: the tab's Cancel button sets it, the running work's Watch
    reads it before each forward pass. One instance per tab, so Cancel stops only that tab's work.

    A measurement on ZeroGPU runs in a forked worker, which cannot see this process's memory: there the flag is a
    file (`file_for`), whose name is plain data that crosses into the worker, on the same machine's disk."""

    def __init__(self):
        self._flags: dict[str, threading.Event] = {}
        self._pressed: dict[str, float] = {}  # when each session's Cancel reached the server (time.monotonic)
        self._dir = Path(tempfile.gettempdir()) / f"decoding-lab-cancel-{os.getpid()}" / f"{id(self):x}"

    def watch(self, request: gr.Request | None, progress: gr.Progress, between_passes=None) -> Watch:
        """A Watch for this session's new run (its flag cleared) that reports to the progress bar; between two
        forward passes it calls `between_passes` (to let other sessions use the model)."""
        flag = self._flag(request)
        flag.clear()
        return Watch(paced(progress), flag.is_set, between_passes or (lambda: None), deadline())

    def file_for(self, request: gr.Request | None) -> str:
        """The path of this session's flag file for a new measurement (cleared): it exists once Cancel is pressed."""
        self._flag(request).clear()
        path = self._file(request)
        path.unlink(missing_ok=True)
        return str(path)

    def cancel(self, request: gr.Request = None) -> None:
        self._pressed[_session(request)] = time.monotonic()
        self._flag(request).set()
        path = self._file(request)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def since_pressed(self, request: gr.Request | None) -> float | None:
        """Seconds since this session's Cancel reached the server, read as its work ends (None: not pressed): what
        the page says, so a person, and a test on a loaded machine, reads the server's own time to stop."""
        pressed = self._pressed.get(_session(request))
        return None if pressed is None else time.monotonic() - pressed

    def wire(self, button: gr.Button):
        """The Cancel button: it skips the model queue, or it would wait behind the run it should stop."""
        return button.click(self.cancel, concurrency_limit=None, show_progress="hidden")

    def _flag(self, request: gr.Request | None) -> threading.Event:
        return self._flags.setdefault(_session(request), threading.Event())

    def _file(self, request: gr.Request | None) -> Path:
        # a session hash is gradio's random letters and digits; keep only those, so it is always a plain file name
        return self._dir / "".join(ch for ch in _session(request) if ch.isalnum())


def _session(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "default"
