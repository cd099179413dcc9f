"""Where a class round's state lives: one interface (`RoundState`), two homes, chosen once when the server starts.

- `LocalState` (this file): in the server's own memory, for one process (`make run`).
- `RedisState` (decoding/classround/shared.py): in Redis (`--store redis://...`), for a lecture hall's replicas, so a
  round started on one replica is joined, drawn from and revealed from any other.

What is state: the round's setup (its prompt, its teacher key's hash, its limits), its fields (kind, settings, step,
what was appended, the draw's number, ended, version ...), its seats and their pings, each draw's tallies, each step's
guesses, each greedy start's steps, each student's generator, and what the model computed for the class (a draw's
processed logits, a step's probabilities) for the replicas that did not compute it. What is not: the model's own work,
a `Run` and its KV cache, which stays on the replica that does it (decoding/classround/round.py).

Every method is one atomic change or one consistent read: many students drawing at once, in one process or in
several, each have their draw counted once (Redis: one Lua script or MULTI/EXEC each, never read-modify-write from
Python). `Round` holds the rules and their messages; a state only says what happened ("locked", "removed", False).
"""

import contextlib
import threading
import time
from collections import Counter
from dataclasses import dataclass, replace

import torch

from decoding.classround.records import Appended
from decoding.pipeline import SamplerSettings

JOINED, LOCKED, REMOVED = "joined", "locked", "removed"  # what `join` found


@dataclass(frozen=True)
class Setup:
    """What a round is made with, never changed."""

    code: str
    key_hash: str  # sha256 of the teacher key: the key itself never leaves the teacher's page and the round's check
    prompt_text: str
    prompt_ids: tuple[int, ...]
    prompt_tokens: tuple[str, ...]
    max_steps: int
    greedy_length: int
    draws_per_s: float


@dataclass(frozen=True)
class Fields:
    """What the teacher changes (one writer: the teacher's page) and the counters every change moves."""

    kind: str
    settings: SamplerSettings
    locked: bool = False
    appended: tuple[Appended, ...] = ()
    draws: int = 0  # the current draw's number (0: none yet)
    previous: int = 0  # the draw kept beside it (0: none)
    greedy: int = 0  # the current greedy start's number
    revealed: bool = False  # the current step's guesses
    done: str | None = None  # the text's end (eos, length)
    ended: str | None = None
    moved_to: str | None = None
    version: int = 0  # changes with everything the projector shows
    shown: int = 0  # changes with what every student's page shows
    last_active: float = 0.0  # the round's clock at the last action

    @property
    def step(self) -> int:
        return len(self.appended)


@dataclass
class SeatState:
    seed: int
    heard: float
    left: bool = False
    removed: bool = False
    allowance: float = 0.0  # draws it may make now (a token bucket)
    checked: float = 0.0  # when its allowance was last counted


@dataclass(frozen=True)
class Tally:
    """One draw's counts: every draw made (the absent's too), by token, by student in order, and each student's last
    draw's serial number (the draws counted with it)."""

    counts: Counter
    total: int
    by_student: dict[str, list[int]]
    last: dict[str, int]


class RoundState:
    """The interface both homes implement (each method's docstring is the contract)."""

    clock = staticmethod(time.monotonic)  # the default clock of a round in this home
    shared = False  # whether other processes (a lecture hall's replicas) read and write the round too

    def create(self, setup: Setup, fields: Fields) -> None:
        """A new round (its code is its own: `rounds` claims it first)."""
        raise NotImplementedError

    def setup(self) -> Setup:
        raise NotImplementedError

    def fields(self) -> Fields:
        raise NotImplementedError

    def change(self, now: float, everyone: bool = False, **changes) -> None:
        """Set `changes` (Fields' names), version + 1, shown + `everyone`, last_active = now: at once."""
        raise NotImplementedError

    def close(self, now: float, why: str, moved_to: str | None) -> bool:
        """End the round, unless it has ended already (False)."""
        raise NotImplementedError

    def touch(self, last_active: float) -> None:
        """Set the round's last action's time alone (a test's clock, an idle round)."""
        raise NotImplementedError

    # --- seats ---

    def join(self, student: str, seed: int, now: float, allowance: float) -> str:
        """Seat `student` (again: counted again), unless the teacher removed it (REMOVED) or the round is locked and it
        is new or had left (LOCKED); JOINED. The version moves and the round is active."""
        raise NotImplementedError

    def heard(self, student: str, now: float) -> None:
        """A seat not left nor removed was heard from now."""
        raise NotImplementedError

    def leave(self, student: str) -> bool:
        """The seat left (False: no such seat, or it had)."""
        raise NotImplementedError

    def remove(self, student: str) -> bool:
        """The teacher removed the seat (False: no such seat)."""
        raise NotImplementedError

    def seats(self) -> dict[str, SeatState]:
        raise NotImplementedError

    def swept(self, absent: frozenset) -> None:
        """The seats counted out are `absent`: the version moves if they changed since the last sweep."""
        raise NotImplementedError

    def allow(self, student: str, now: float, rate: float, burst: float) -> bool:
        """One draw within the seat's rate (taken from its bucket), or False (nothing taken)."""
        raise NotImplementedError

    # --- draws, guesses, greedy steps ---

    def count(self, draw: int, drawn: list[tuple[str, list[int]]], now: float) -> int:
        """Count each student's tokens in draw `draw`, in order; the version moves, the round is active. Returns the
        draws counted with the last one."""
        raise NotImplementedError

    def tally(self, draw: int) -> Tally:
        raise NotImplementedError

    def guess(self, step: int, student: str, token: int, now: float) -> bool:
        """`student`'s guess at `step` (a new one replaces theirs); False once that step's guesses are revealed."""
        raise NotImplementedError

    def guesses(self, step: int) -> dict[str, int]:
        raise NotImplementedError

    def greedy_step(self, start: int, student: str, step: tuple[int, int, str], now: float) -> None:
        """One greedy step (token, rows in its pass, its pass's mode) of `student` in greedy start `start`."""
        raise NotImplementedError

    def greedy_steps(self, start: int) -> dict[str, list[tuple[int, int, str]]]:
        raise NotImplementedError

    # --- what the model computed, and each seat's generator ---

    def put_computed(self, name: str, tensor: torch.Tensor, **info) -> None:
        """A (V,) result of the replica that computed it (a draw's processed logits, a step's probabilities), with
        what it was computed for (`info`: its step, its settings)."""
        raise NotImplementedError

    def computed(self, name: str) -> tuple[torch.Tensor, dict]:
        """What `put_computed` stored under `name` (float32, on the CPU), and its info."""
        raise NotImplementedError

    def prune(self, keep: set[str]) -> None:
        """Forget what the model computed but `keep` (the draws and the step a page may still read)."""
        raise NotImplementedError

    def generator(self, student: str, make):
        """A context manager: the student's generator (`make()` a new one, seeded, at their first draw) as their last
        draw left it, held by this caller alone until it exits (their draws, one at a time, in order)."""
        raise NotImplementedError


class LocalState(RoundState):
    """The round in this process's memory (one lock for every change)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._setup: Setup | None = None
        self._fields: Fields | None = None
        self._absent: frozenset = frozenset()
        self._seats: dict[str, SeatState] = {}
        self._tallies: dict[int, Tally] = {}
        self._guesses: dict[int, dict[str, int]] = {}
        self._greedy: dict[int, dict[str, list]] = {}
        self._tensors: dict[str, tuple[torch.Tensor, dict]] = {}
        self._generators: dict[str, tuple[torch.Generator, threading.Lock]] = {}

    def create(self, setup, fields):
        self._setup, self._fields = setup, fields

    def setup(self):
        return self._setup

    def fields(self):
        return self._fields

    def change(self, now, everyone=False, **changes):
        with self._lock:
            f = self._fields
            self._fields = replace(f, **changes, version=f.version + 1, shown=f.shown + everyone, last_active=now)

    def close(self, now, why, moved_to):
        with self._lock:
            if self._fields.ended is not None:
                return False
            f = self._fields
            self._fields = replace(f, ended=why, moved_to=moved_to, version=f.version + 1, shown=f.shown + 1)
            self._fields = replace(self._fields, last_active=now)
            return True

    def touch(self, last_active):
        with self._lock:
            self._fields = replace(self._fields, last_active=last_active)

    def join(self, student, seed, now, allowance):
        with self._lock:
            known = self._seats.get(student)
            if known is not None and known.removed:
                return REMOVED
            if self._fields.locked and (known is None or known.left):
                return LOCKED
            if known is None:
                known = self._seats[student] = SeatState(seed, now, allowance=allowance, checked=now)
            known.left, known.heard = False, now
            self._bump(now)
            return JOINED

    def heard(self, student, now):
        with self._lock:
            seat = self._seats.get(student)
            if seat is not None and not (seat.left or seat.removed):
                seat.heard = now

    def leave(self, student):
        with self._lock:
            seat = self._seats.get(student)
            if seat is None or seat.left:
                return False
            seat.left = True
            return True

    def remove(self, student):
        with self._lock:
            seat = self._seats.get(student)
            if seat is None:
                return False
            seat.removed = True
            return True

    def seats(self):
        with self._lock:
            return {s: replace(seat) for s, seat in self._seats.items()}

    def swept(self, absent):
        with self._lock:
            if absent != self._absent:
                self._absent = absent
                self._fields = replace(self._fields, version=self._fields.version + 1)

    def allow(self, student, now, rate, burst):
        with self._lock:
            seat = self._seats[student]
            seat.allowance = min(burst, seat.allowance + (now - seat.checked) * rate)
            seat.checked = now
            if seat.allowance < 1 - 1e-9:  # a press exactly on the rate is within it
                return False
            seat.allowance -= 1
            return True

    def count(self, draw, drawn, now):
        with self._lock:
            t = self._tallies.setdefault(draw, Tally(Counter(), 0, {}, {}))
            total = t.total
            for student, tokens in drawn:
                t.counts.update(tokens)
                t.by_student.setdefault(student, []).extend(tokens)
                total += len(tokens)
                t.last[student] = total
            self._tallies[draw] = replace(t, total=total)
            self._bump(now)
            return total

    def tally(self, draw):
        with self._lock:
            t = self._tallies.get(draw)
            if t is None:
                return Tally(Counter(), 0, {}, {})
            return Tally(Counter(t.counts), t.total, {s: list(v) for s, v in t.by_student.items()}, dict(t.last))

    def guess(self, step, student, token, now):
        with self._lock:
            if self._fields.revealed and step == self._fields.step:
                return False
            self._guesses.setdefault(step, {})[student] = token
            self._bump(now)
            return True

    def guesses(self, step):
        with self._lock:
            return dict(self._guesses.get(step, {}))

    def greedy_step(self, start, student, step, now):
        with self._lock:
            self._greedy.setdefault(start, {}).setdefault(student, []).append(step)
            self._bump(now)

    def greedy_steps(self, start):
        with self._lock:
            return {s: list(steps) for s, steps in self._greedy.get(start, {}).items()}

    def put_computed(self, name, tensor, **info):
        self._tensors[name] = (tensor, info)

    def computed(self, name):
        return self._tensors[name]

    def prune(self, keep):
        self._tensors = {name: held for name, held in self._tensors.items() if name in keep}

    @contextlib.contextmanager
    def generator(self, student, make):
        with self._lock:
            if student not in self._generators:
                self._generators[student] = (make(), threading.Lock())
            generator, lock = self._generators[student]
        with lock:
            yield generator

    def _bump(self, now: float) -> None:
        f = self._fields
        self._fields = replace(f, version=f.version + 1, last_active=now)
