"""The scheduler's passes, first in line for the interpreter lock while they run.

A forward pass on the CPU is a few thousand tensor operations. Each lets go of the interpreter lock while it computes
and must take it back before the next one starts. When another Python thread holds the lock (a session's handler
drawing its view, gradio answering a request), the pass waits until that thread lets go: at the latest after the
interpreter's switch interval, 5 ms by default. Measured on the 2-core machine (the bundled model, one decode row):
a pass took 41 ms alone, 15 s beside one thread that only ran Python, 79 ms beside it with a 0.1 ms switch interval.
In a class of 100 the scheduler's passes took 175 ms at the median for about four rows a tick.

`urgent()` lowers the switch interval to URGENT_S while any pass under it runs, and puts back the one before once none
does: a thread holding the lock is asked to hand it over after 0.1 ms instead of 5 while a pass waits for it. The
interval is the process's own, so the other threads switch among themselves as often meanwhile, which costs them a
little of their time.
"""

import contextlib
import sys
import threading

URGENT_S = 1e-4  # the switch interval while a pass runs (CPython's default: 5e-3)

_lock = threading.Lock()
_running = 0  # passes under `urgent` now
_before = sys.getswitchinterval()  # the interval to put back when none runs


@contextlib.contextmanager
def urgent():
    """Run the block (a forward pass) with the interpreter's switch interval at URGENT_S; nests and may be entered by
    several threads: the interval goes back once the last one leaves."""
    global _running, _before
    with _lock:
        if _running == 0:
            _before = sys.getswitchinterval()
            sys.setswitchinterval(URGENT_S)
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                sys.setswitchinterval(_before)
