"""How a long piece of work reports progress and learns it should stop.

A measurement, an experiment or a run of many steps takes a `Watch`: it calls `on_progress(fraction, message)`
as it goes and `check()` before each forward pass, which raises `Cancelled` once `should_stop()` is true, and
first calls `between_passes()`: on a shared server, that lets other people's steps use the model in between.
"""

from collections.abc import Callable
from dataclasses import dataclass


class Cancelled(Exception):
    """The person asked to stop; the work ends at the next forward pass."""


@dataclass
class Watch:
    """How a long measurement reports progress and learns it should stop (both optional)."""

    on_progress: Callable[[float, str], None] = lambda fraction, message: None
    should_stop: Callable[[], bool] = lambda: False
    between_passes: Callable[[], None] = lambda: None

    def check(self) -> None:
        self.between_passes()
        if self.should_stop():
            raise Cancelled("measurement cancelled")
