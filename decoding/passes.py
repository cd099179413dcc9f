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
And which implementation computed its logits, two more words:
- its implementation (IMPLS): "modules", transformers' Llama modules (decoding.forward, the static step and its graph,
  the modules' packed pass `ragged.packed_pass`); "scripted", the TorchScript copy of them
  (decoding.serving.scripted), which the scheduler runs for a solo decode row or a packed pass when it fits. A pass
  that copied its logits names the implementation of the pass that computed them;
- where its logits come from (ORIGINS): "computed", by this pass; "fallback", by a pass of its own after the packed
  pass it was in raised (the scheduler undoes what that wrote and runs each of its rows alone); "pool", copied from the
  prefix cache's pool of whole prompts; "in flight", handed over by an identical prompt computed in the same tick;
  "shared", a prefill run once for many runs of one prompt (decoding.loop.prefill_once).
Plain data, no torch: the page's captions read the same words.
"""

from dataclasses import dataclass

KINDS = ("eager", "static", "captured")
MODES = ("solo", "packed", "alone", "lens", "cached", "prefix")
IMPLS = ("modules", "scripted")
ORIGINS = ("computed", "fallback", "pool", "in flight", "shared")


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
    impl: str = "modules"  # which implementation computed the logits: IMPLS
    origin: str = "computed"  # where the logits come from: ORIGINS

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"a pass's mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.kind not in KINDS:
            raise ValueError(f"a pass's kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.impl not in IMPLS:
            raise ValueError(f"a pass's implementation must be one of {', '.join(IMPLS)}, got {self.impl!r}")
        if self.origin not in ORIGINS:
            raise ValueError(f"a pass's origin must be one of {', '.join(ORIGINS)}, got {self.origin!r}")
