"""Whose turn it is on the shared model: one forward pass at a time, first come first served.

Two forward passes at once on one CPU would only fight for the same cores (and on a GPU for the same memory
bandwidth), so every user of the model takes a turn: the scheduler for each batched tick, a beam search for
each of its steps, the batching lesson between its own forward passes (`pass_turn`), and a timing measurement
for the whole measurement (it needs a quiet machine). Turns are granted in the order they were asked for, so
a long job that passes its turn after every forward pass lets everyone else's steps in between. A turn is
re-entrant: code that holds it may call code that takes it again.
"""

import threading
import time
from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class Holder:
    """Who has the model now, and (for long exclusive work) when it expects to be done."""

    label: str
    since: float  # time.monotonic() when the turn was granted
    exclusive: bool = False
    eta_s: float | None = None  # expected length of exclusive work, when known

    def left_s(self, now: float) -> float | None:
        return None if self.eta_s is None else max(0.0, self.eta_s - (now - self.since))


class Turns:
    """A fair, re-entrant lock on the model that says who holds it."""

    def __init__(self):
        self._cond = threading.Condition()
        self._queue: deque[object] = deque()  # tickets, in order of asking
        self._owner: int | None = None  # thread id
        self._depth = 0
        self.holder: Holder | None = None

    def acquire(self, label: str, exclusive: bool = False, eta_s: float | None = None) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return
            ticket = object()
            self._queue.append(ticket)
            self._cond.wait_for(lambda: self._owner is None and self._queue[0] is ticket)
            self._queue.popleft()
            self._owner, self._depth = me, 1
            self.holder = Holder(label, time.monotonic(), exclusive, eta_s)

    def release(self) -> None:
        with self._cond:
            assert self._owner == threading.get_ident(), "release a turn only from the thread that holds it"
            self._depth -= 1
            if self._depth == 0:
                self._owner, self.holder = None, None
                self._cond.notify_all()

    def waiting(self) -> int:
        return len(self._queue)

    def pass_turn(self) -> None:
        """Between two forward passes of a long job: let whoever is waiting go first, then carry on."""
        me = threading.get_ident()
        with self._cond:
            if self._owner != me or not self._queue:
                return
            holder, depth = self.holder, self._depth
            self._owner, self._depth, self.holder = None, 0, None
            self._cond.notify_all()
        self.acquire(holder.label, holder.exclusive, holder.eta_s)
        with self._cond:
            self._depth = depth

    def turn(self, label: str, exclusive: bool = False, eta_s: float | None = None) -> "_Turn":
        """`with turns.turn("beam search"): ...` holds the model for the block."""
        return _Turn(self, label, exclusive, eta_s)


class _Turn:
    def __init__(self, turns: Turns, label: str, exclusive: bool, eta_s: float | None):
        self.turns, self.args = turns, (label, exclusive, eta_s)

    def __enter__(self):
        self.turns.acquire(*self.args)
        return self

    def __exit__(self, *exc):
        self.turns.release()
        return False
