"""How a long piece of work reports progress and learns it should stop.

A measurement, an experiment or a run of many steps takes a `Watch`: it calls `on_progress(fraction, message)`
as it goes and `check()` before each forward pass, which raises `Cancelled` once `should_stop()` is true, and
first calls `between_passes()`: on a shared server, that lets other people's steps use the model in between.
A `Deadline` bounds one request's work: past it, the next check raises `OverLimit`, a ValueError that names the limit,
so the person reads why the work stopped (a run keeps the steps it took).
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field


class Cancelled(Exception):
    """The person asked to stop; the work ends at the next forward pass."""


class OverLimit(ValueError):
    """One request ran past the server's time limit for a request; the work ends at the next forward pass."""


@dataclass(frozen=True)
class Deadline:
    """A request's time limit: `limit_s` seconds from `start` (time.monotonic), checked between forward passes."""

    limit_s: float
    start: float = field(default_factory=time.monotonic)
    why: str = "each request on this server"

    def check(self, clock: Callable[[], float] = time.monotonic) -> None:
        spent = clock() - self.start
        if spent > self.limit_s:
            raise OverLimit(
                f"stopped after {spent:,.0f} s: {self.why} may run for at most {self.limit_s:,.0f} s, so that one "
                "long request cannot hold the server. Ask for less (fewer tokens, samples or beams) and press again."
            )

    @classmethod
    def never(cls) -> "Deadline":
        return cls(float("inf"))


@dataclass
class Watch:
    """How a long measurement reports progress and learns it should stop (both optional)."""

    on_progress: Callable[[float, str], None] = lambda fraction, message: None
    should_stop: Callable[[], bool] = lambda: False
    between_passes: Callable[[], None] = lambda: None
    deadline: Deadline = field(default_factory=Deadline.never)

    def check(self) -> None:
        self.between_passes()
        if self.should_stop():
            raise Cancelled("measurement cancelled")
        self.deadline.check()
