"""What Back needs to undo an advance of a run: before each step (decoding.loop.Run) or round
(decoding.speculative.run.SpecRun), the run's random generator state and how many ids it had.

Back restores both, so the step taken again draws what it drew the first time: a seeded run replays exactly.
The run crops its own KV cache and records; this holds only what both kinds of run share.
"""

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Checkpoint:
    """The run just before one advance: its generator's state and its number of ids (prompt included)."""

    rng_state: torch.Tensor
    n_ids: int


class Checkpoints:
    """A stack of checkpoints over one run's generator: `mark` before an advance, `undo` to go back over it."""

    def __init__(self, generator: torch.Generator):
        self.generator = generator
        self._stack: list[Checkpoint] = []

    def __len__(self) -> int:
        return len(self._stack)

    def mark(self, n_ids: int) -> None:
        """Remember the generator's state now, before an advance from `n_ids` ids."""
        self._stack.append(Checkpoint(rng_state=self.generator.get_state(), n_ids=n_ids))

    def undo(self) -> int:
        """Restore the generator to its state before the last advance; returns how many ids the run had then."""
        if not self._stack:
            raise ValueError("nothing to go back to: the run has not advanced")
        checkpoint = self._stack.pop()
        self.generator.set_state(checkpoint.rng_state)
        return checkpoint.n_ids
