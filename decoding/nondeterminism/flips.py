"""When can a greedy token flip? The rule the batching lab's figures and captions all read.

Greedy takes the argmax. If a batch moves every logit of row 0 by at most `noise`, the top-1 logit can go
down by `noise` and the top-2 up by `noise`: the two swap only if the solo run's top-1/top-2 gap is at most
2 × noise. At exactly 2 × noise they meet, and a tie is broken by the kernel, so the boundary counts as a
possible flip. Pure python (no torch), so `visuals` can call it.
"""


def flip_possible(gap: float, noise: float | None) -> bool:
    """A flip needs the noise to bridge the gap: gap <= 2 x noise. `noise` None (the contexts already differ): no."""
    return noise is not None and gap <= 2 * noise
