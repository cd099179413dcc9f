"""How the forward pass behind a distribution ran: one record (`Pass`) for every pass of a run, in one vocabulary.

A pass is named on two axes, the same words in the run (decoding.loop.Run, its `path`), the regime map
(decoding.timing.regimes.PATHS) and the Step line (visuals.serving.traffic.pass_caption):
- its kind, what ran on the device (KINDS): "eager", the model called kernel by kernel with a mask built on the host
  (on a growing cache, or a prompt onto a static one); "static", the static cache's one-token step (decoding.static)
  run as it is; "captured", that step replayed as a CUDA graph, one launch for the whole step;
- what batched it (MODES): "solo", nobody else in it; "packed", shared with other sessions' tokens by the scheduler
  (decoding.serving) or with other runs of an experiment (ragged.feed_together); "alone", kept alone on request;
  "lens", the logit lens's own pass over the position with every layer's hidden state (decoding.lens); "cached", a
  prompt not computed, its logits those its first computation got (the prefix cache, or one prefill shared by many
  runs: decoding.loop.prefill_once); "prefix", a prompt whose start was copied from the prefix cache and the rest
  computed against it (decoding.serving.prefix).
Plain data, no torch: the page's captions read the same words.
"""

from dataclasses import dataclass

KINDS = ("eager", "static", "captured")
MODES = ("solo", "packed", "alone", "lens", "cached", "prefix")


@dataclass(frozen=True)
class Pass:
    """One forward pass: its time, who shared it and how (`mode`), what ran (`kind`); `noise` is how far sharing it
    can move a logit from its solo value."""

    ms: float  # wall time of the pass (of all its chunks, for a prompt prefilled in chunks)
    rows: int = 1  # sessions that shared it
    mode: str = "solo"  # what batched it: MODES
    chunks: int = 1
    noise: float = 0.0
    kind: str = "eager"  # what ran: KINDS
    # a "cached" prompt's first computation (ms), which this pass copied instead of running; None: not known
    computed_ms: float | None = None

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"a pass's mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.kind not in KINDS:
            raise ValueError(f"a pass's kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
