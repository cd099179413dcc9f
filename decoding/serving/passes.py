"""How the forward pass behind a distribution ran: the scheduler's answer to a session, recorded with each step."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Pass:
    """A forward pass run alone, or packed with other sessions' tokens by the scheduler (decoding.serving), where
    `noise` is how far packing can move a logit from its solo value."""

    ms: float  # wall time of the pass (of all its chunks, for a prompt prefilled in chunks)
    rows: int = 1  # sessions that shared it
    # "solo": nobody else in it; "packed": shared; "alone": kept alone on request; "lens": the logit lens's own pass
    # over the position (decoding.lens), with every layer's hidden state
    mode: str = "solo"
    chunks: int = 1
    noise: float = 0.0
