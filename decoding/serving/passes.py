"""How the forward pass behind a distribution ran: the scheduler's answer to a session, recorded with each step."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Pass:
    """A forward pass run alone, or packed with other sessions' tokens by the scheduler (decoding.serving), where
    `noise` is how far packing can move a logit from its solo value."""

    ms: float  # wall time of the pass (of all its chunks, for a prompt prefilled in chunks)
    rows: int = 1  # sessions that shared it
    # "solo": nobody else in it; "packed": shared; "alone": kept alone on request; "lens": the logit lens's own pass
    # over the position (decoding.lens), with every layer's hidden state; "cached": a prompt answered from the prefix
    # cache, not computed (the logits its first computation got); "prefix": a prompt whose start was copied from the
    # prefix cache and the rest computed against it (decoding.serving.prefix); a static-cache run's one-token pass
    # (decoding.static): "static" uncaptured (CPU), "captured" a CUDA graph's replay
    mode: str = "solo"
    chunks: int = 1
    noise: float = 0.0
