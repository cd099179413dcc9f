"""Back's checkpoints: the generator as it was before an advance, and how many ids the run had."""

import pytest
import torch

from decoding.checkpoints import Checkpoints


def test_undo_restores_the_generator_so_the_same_draw_comes_again_and_returns_the_ids_before_it():
    generator = torch.Generator().manual_seed(7)
    checkpoints = Checkpoints(generator)
    checkpoints.mark(5)
    first = torch.rand(3, generator=generator)
    checkpoints.mark(6)
    torch.rand(3, generator=generator)
    assert len(checkpoints) == 2
    assert checkpoints.undo() == 6
    assert checkpoints.undo() == 5
    assert torch.equal(torch.rand(3, generator=generator), first)
    assert len(checkpoints) == 0


def test_undo_with_no_advance_is_refused_with_a_message():
    with pytest.raises(ValueError, match="nothing to go back to"):
        Checkpoints(torch.Generator()).undo()
