"""Which round each page is in, and what its patched view was last sent.

A page is one gradio session: its seat is found by the session's hash, so a student's click needs no input of its own
(Draw sends nothing but the click), and gradio's unload event, which knows only the session, can count the student out
of their round. A student's id and seed come from the session's hash too: the same page keeps them, and the round
records the seed beside every draw it makes.

A student's page also holds its seat's `ping`, a secret the round's plain route is asked with every few seconds
(ui/classround/shown.py): that ask is how the round hears the page is still open (decoding.classround.round)."""

import hashlib
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from ui.patch import Patcher

MAX_SEATS = 4096  # pages in rounds at once; the oldest seat is forgotten first (a class of 100 many times over)


@dataclass
class Seat:
    code: str  # the round's
    student: str | None  # None: the round's projector (the page that started it)
    seed: int = 0
    patcher: Patcher = field(default_factory=Patcher)  # what the page's view was last sent
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # one view sent at a time
    ping: str = field(default_factory=lambda: secrets.token_urlsafe(12))  # what its page asks the round with


class Seats:
    def __init__(self, limit: int = MAX_SEATS):
        self.limit, self._seats, self._lock = limit, OrderedDict(), threading.Lock()
        self._pings: dict[str, Seat] = {}

    def get(self, session: str | None) -> Seat | None:
        with self._lock:
            return self._seats.get(session)

    def sit(self, session: str, seat: Seat) -> Seat:
        with self._lock:
            before = self._seats.pop(session, None)
            if before is not None:
                self._pings.pop(before.ping, None)
            self._seats[session] = seat
            self._pings[seat.ping] = seat
            while len(self._seats) > self.limit:
                self._pings.pop(self._seats.popitem(last=False)[1].ping, None)
        return seat

    def leave(self, session: str | None) -> Seat | None:
        with self._lock:
            seat = self._seats.pop(session, None)
            if seat is not None:
                self._pings.pop(seat.ping, None)
            return seat

    def pinged(self, ping: str | None) -> Seat | None:
        """The seat whose page asks with `ping`, if it is still seated."""
        with self._lock:
            return self._pings.get(ping) if ping else None


SEATS = Seats()


def student_of(session: str) -> tuple[str, int]:
    """A page's student id (short, shown on the projector when their greedy text differs) and seed (for
    torch.Generator, under decoding.knobs.SEED_MAX), both from its session's hash."""
    digest = hashlib.sha256(session.encode()).hexdigest()
    return f"s{digest[:5]}", int(digest[5:13], 16)
