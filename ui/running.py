"""A run whose views stream to the page, and the answer that stops it, drawn in that order.

Run N, Run to end and the quantization tab's Run are generators: gradio sends each view they yield as it comes.
Another event of the same page can stop such a run while it goes: Reset, a new Prefill, a new format. Both write the
same outputs, so the page shows whichever reaches it last, and that must be the answer that stopped the run.

Two facts of gradio 6 (`gradio/queueing.py`, `Queue.process_events`; `gradio/blocks.py`,
`Blocks.handle_streaming_diffs`) give the order:
- a yielded view is put on the page's one message stream before gradio asks the generator for the next;
- when a generator ends, its completion message sends its last yielded value again, after everything it sent.

So a run holds its `Running` lock from the start of each step until gradio asks for the next view: whenever it does
not hold it, every view it made is on the stream. `Running.stop` marks the run stopped and then takes the lock, so
the stopping answer is queued after the run's last view; the run, taking the lock again, sees it is stopped and
ends. A run ends, stopped or not, by yielding `END`, which draws nothing, so the completion message's copy of it draws
nothing either (a run that ended by itself just before a Reset would otherwise draw its last view over the Reset).

The Stop button ends a run the same way (`Running.halt`), so its answer ("stopped by you") is drawn after the run's
last view, never under it; unlike `stop`, which is for good (the run's entry is going), a halt ends only the run under
way: Run to end pressed after it goes on. It returns how long the run took to end after Stop reached the server
(one step's time at most), which the page says.

gradio's own `cancels=` is not used for this: it runs beside the events, in no order with them, and a run cancelled
while it holds the lock would keep it (`stop` then waits `SETTLE_S`, not forever).
"""

import threading
import time
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")

END = None  # what a run yields last: no output changes (a tab's handler answers it with {})
_ENDED = object()
# how long `stop` waits for a step under way to hand on its view: a step takes well under a second; past this the
# page is not left waiting (a page that went away leaves its run suspended, holding the lock)
SETTLE_S = 10
# how often a run redraws the page as it goes, its views and its progress bar alike: four times a second follows the
# run smoothly, where a redraw for every token (20-30 a second on a CPU, hundreds on a GPU) kept the browser busy
# beside the model and behind the run: a Try-this run of 900 tokens cost Chromium 20 s of CPU on a 2-core machine,
# time a student's laptop (or the server's second core) has better uses for
REDRAW_EVERY_S = 0.25


class Pace:
    """`due()` is true at most once every `every_s` seconds, the first time always."""

    def __init__(self, every_s: float = REDRAW_EVERY_S, clock=time.monotonic):
        self.every_s = every_s
        self.clock = clock
        self.last = None  # when due() was last true

    def due(self) -> bool:
        now = self.clock()
        if self.last is not None and now - self.last < self.every_s:
            return False
        self.last = now
        return True


class Running:
    def __init__(self):
        self._held = threading.Lock()
        self._state = threading.Lock()  # `active` and `halting` change together
        self.stopped = False  # for good: the run's entry is going (Reset, a new Prefill)
        self.halting = False  # Stop pressed: the run under way ends, a later one goes on
        self.active = False  # a run's views are under way
        self.ended_at: float | None = None  # when the last run ended (time.monotonic)
        self._ended = threading.Event()  # set as a run ends: its views are all on the page's stream by then

    def views(
        self, steps: Iterator[T], every_s: float = REDRAW_EVERY_S, clock=time.monotonic, draw=None
    ) -> Iterator[object]:
        """The views of `steps` (taking one runs its step), each made while the lock is held, until `steps` ends or
        the run is stopped; then `END`, either way: the completion message's copy of the last value must draw nothing
        even when the run ended by itself, as another answer may have come in between.

        A view is yielded (holding the lock) at most once every `every_s` seconds: the first, then the newest one
        when its time comes, and the last one a run made. Each view shows the whole run so far, so a view not sent
        loses nothing; sending every token's (25 a second on a CPU, hundreds on a GPU) would have a browser redraw
        the chart more often than a person can follow, and fall behind the run. A run stopped drops the views it has
        not sent: the stopping answer is drawn last. With `draw`, what `steps` yields is turned into a view only when
        it is sent (`draw(item)`): a view made of changes since the last one sent (ui/patch.py) must be drawn then."""
        draw = draw or (lambda item: item)
        pace, unsent = Pace(every_s, clock), _ENDED
        with self._state:
            self.active = True
            self._ended.clear()
        try:
            while True:
                with self._held:
                    try:
                        item = _ENDED if self._over() else next(steps, _ENDED)
                    except ValueError:  # the run refused its next step (a limit): show how far it got, then say why
                        if unsent is not _ENDED:
                            yield draw(unsent)
                        raise
                    if self._over():  # stopped while this step ran: its view would come after the answer
                        break
                    if item is _ENDED:
                        if unsent is not _ENDED:
                            yield draw(unsent)
                        break
                    if not pace.due():
                        unsent = item
                        continue
                    unsent = _ENDED
                    yield draw(item)
        finally:  # ended, stopped, refused or closed: a later Stop finds nothing under way
            with self._state:
                self.active = self.halting = False
                self.ended_at = time.monotonic()
                self._ended.set()
        yield END

    def _over(self) -> bool:
        return self.stopped or self.halting

    def stop(self) -> None:
        """Stop the run, and return once the view of a step under way is on its way to the page (or after
        `SETTLE_S`)."""
        self.stopped = True
        if self._held.acquire(timeout=SETTLE_S):
            self._held.release()

    def halt(self) -> float | None:
        """Stop's press: end the run under way after its step in flight, and return once its last view is on its
        way to the page, with the seconds from this call to the run's end; None when no run was under way (a later
        run is not stopped by it)."""
        pressed = time.monotonic()
        with self._state:
            if not self.active:
                return None
            self.halting = True
        if not self._ended.wait(SETTLE_S):
            return None
        return max(0.0, self.ended_at - pressed)
