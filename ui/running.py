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
        self.stopped = False

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
        while True:
            with self._held:
                try:
                    item = _ENDED if self.stopped else next(steps, _ENDED)
                except ValueError:  # the run refused its next step (a limit): show how far it got, then say why
                    if unsent is not _ENDED:
                        yield draw(unsent)
                    raise
                if self.stopped:  # stopped while this step ran: its view would come after the answer
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
        yield END

    def stop(self) -> None:
        """Stop the run, and return once the view of a step under way is on its way to the page (or after
        `SETTLE_S`)."""
        self.stopped = True
        if self._held.acquire(timeout=SETTLE_S):
            self._held.release()
