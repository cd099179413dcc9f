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
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")

END = None  # what a run yields last: no output changes (a tab's handler answers it with {})
_ENDED = object()
# how long `stop` waits for a step under way to hand on its view: a step takes well under a second; past this the
# page is not left waiting (a page that went away leaves its run suspended, holding the lock)
SETTLE_S = 10


class Running:
    def __init__(self):
        self._held = threading.Lock()
        self.stopped = False

    def views(self, steps: Iterator[T]) -> Iterator[T | None]:
        """Each view of `steps` (taking one runs its step), made and yielded while the lock is held, until `steps`
        ends or the run is stopped; then `END`, either way: the completion message's copy of the last value must
        draw nothing even when the run ended by itself, as another answer may have come in between."""
        while True:
            with self._held:
                view = _ENDED if self.stopped else next(steps, _ENDED)
                if view is _ENDED or self.stopped:  # stopped while this step ran: its view would come after the answer
                    break
                yield view
        yield END

    def stop(self) -> None:
        """Stop the run, and return once the view of a step under way is on its way to the page (or after
        `SETTLE_S`)."""
        self.stopped = True
        if self._held.acquire(timeout=SETTLE_S):
            self._held.release()
