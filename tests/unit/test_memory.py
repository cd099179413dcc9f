"""What a measurement freed goes back to the machine (decoding.memory): glibc keeps layer-sized blocks freed from
its heaps, and `give_back` returns them."""

import pytest
import torch

from decoding import memory

PAGE = 4096


def resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


@pytest.mark.skipif(not memory.can_give_back(), reason="this C library cannot return freed heap memory on request")
def test_layer_sized_blocks_freed_among_live_ones_stay_resident_until_given_back():
    big = torch.ones(30 * 2**18)  # a 30 MB block, freed: glibc's mmap threshold rises to its size
    del big
    blocks = [torch.ones(900_000) for _ in range(400)]  # 3.6 MB each (a layer of the bundled model): from a heap
    kept = blocks[::10]  # every tenth stays alive, as a measurement's result and the server's own objects do
    del blocks
    memory.give_back()  # what was free before, out of the way
    held = resident_mb()
    lots = [torch.ones(900_000) for _ in range(400)]
    kept += lots[::10]
    del lots
    freed = resident_mb()
    assert freed - held > 1000  # ~1.3 GB freed, still resident: the heap's top is a live block
    assert memory.give_back()
    assert freed - resident_mb() > 1000
    assert len(kept) == 80
