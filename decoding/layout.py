"""How a CPU lays out a linear layer's weights in memory, chosen by measuring on this machine when a model loads.

nn.Linear keeps its weight as (out, in) rows and computes x @ W.T: each output is a dot product along a row. The
same values can sit underneath as (in, out) rows, the weight then being the transpose of a contiguous tensor; the
matrix product reads them in the other order. Which one a CPU's kernels run faster depends on the CPU: on this
project's 2-vCPU AMD EPYC the (in, out) layout made a decode step of the bundled model 12 to 16% faster and a packed
pass of two or three sessions 24 to 29% faster (docs/measurements/serving.md; `bench/packed_rows.py --layout`).

The values are the same; the sums run in another order, so the logits move by float noise (4e-5 here) against the
other layout. `generate()` runs the same modules, so the lab's steps stay token-equal to it.

`choose` times the model's largest linear (the LM head, 113 MB for the bundled model in float32) both ways, on one
row and on two (a step, a small packed pass), and keeps (in, out) only when it takes at most `LEAD` of the time:
a clear lead, so noise in the timing does not flip the choice from one load of the model to the next. A GPU, and a
model whose largest linear is small (the tiny test model: its timings are all noise), keep the layout as loaded.
"""

import time
from statistics import median

import torch
import torch.nn.functional as F

AS_LOADED, TRANSPOSED = "(out, in)", "(in, out)"
# DECODING_LAB_WEIGHT_LAYOUT: "auto" (measure, the default), or one layout whatever the timing
ENV = "DECODING_LAB_WEIGHT_LAYOUT"
NAMED = {"auto": None, "as-loaded": AS_LOADED, "transposed": TRANSPOSED}
LEAD = 0.8  # (in, out) is kept when it takes at most this share of the time (out, in) takes
MIN_BYTES = 16 * 2**20  # a largest linear smaller than this keeps its layout
REPEATS = 5


def largest_linear(model: torch.nn.Module) -> torch.nn.Linear | None:
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    return max(linears, key=lambda m: m.weight.numel(), default=None)


def choose(model: torch.nn.Module, asked: str = "auto") -> str:
    """The layout this machine runs the model's linears faster in (AS_LOADED unless TRANSPOSED clearly leads), or
    the one `asked` names (NAMED: how DECODING_LAB_WEIGHT_LAYOUT sets it)."""
    if asked not in NAMED:
        raise ValueError(f"{ENV} must be one of {', '.join(NAMED)}, got {asked!r}")
    if NAMED[asked] is not None:
        return NAMED[asked]
    head = largest_linear(model)
    if head is None or head.weight.device.type != "cpu" or head.weight.nbytes < MIN_BYTES:
        return AS_LOADED
    return pick(timed(head.weight))


def pick(seconds: dict[str, float]) -> str:
    """TRANSPOSED when it took at most LEAD of AS_LOADED's time, else AS_LOADED."""
    return TRANSPOSED if seconds[TRANSPOSED] <= LEAD * seconds[AS_LOADED] else AS_LOADED


@torch.inference_mode()
def timed(weight: torch.Tensor) -> dict[str, float]:
    """The median seconds of x @ weight.T on one row and on two, in each layout (timed in turns)."""
    weights = {AS_LOADED: weight.contiguous(), TRANSPOSED: transposed(weight)}
    one, two = (torch.randn(rows, weight.shape[1], dtype=weight.dtype) for rows in (1, 2))  # (1, in), (2, in)
    seconds = {name: [] for name in weights}
    for repeat in range(REPEATS + 1):
        for name, w in weights.items():  # in turns, so a slow moment of the machine slows both
            start = time.perf_counter()
            F.linear(one, w)
            F.linear(two, w)
            if repeat:  # the first round warms the kernels up, untimed
                seconds[name].append(time.perf_counter() - start)
    return {name: median(times) for name, times in seconds.items()}


def transposed(weight: torch.Tensor) -> torch.Tensor:
    """The same (out, in) values, laid out as (in, out) rows underneath."""
    return weight.t().contiguous().t()


@torch.no_grad()
def lay_out(model: torch.nn.Module, layout: str) -> None:
    """Lay every nn.Linear's weight out as `layout` (a tied weight, the embedding's, moves with its head); a weight
    already so is left as it is."""
    if layout not in (AS_LOADED, TRANSPOSED):
        raise ValueError(f"a weight layout is {AS_LOADED} or {TRANSPOSED}, got {layout!r}")
    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            m.weight.data = transposed(m.weight.data) if layout == TRANSPOSED else m.weight.data.contiguous()


def like(tensor: torch.Tensor, layout_of: torch.Tensor) -> torch.Tensor:
    """`tensor`'s values in `layout_of`'s layout (a rounded copy of a weight keeps the weight's layout)."""
    if tensor.stride() == layout_of.stride():
        return tensor
    return torch.empty_strided(tensor.shape, layout_of.stride(), dtype=tensor.dtype, device=tensor.device).copy_(tensor)
