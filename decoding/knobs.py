"""Every sampler knob a person sets (on a page, in a shared link, on the command line): its label, its range and its
"off" value, written once, and the one builder that turns such values into `SamplerSettings`.

Each knob is read from its stage (decoding.stages), where the engine's range and the teaching range live side by side:
a knob's range is the engine's, except where a narrower teaching range is stated beside it there, beyond which a
slider would spend its length on values that only show noise.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from decoding import values
from decoding.pipeline import ORDERS, SamplerSettings
from decoding.stages import STAGES, TOP_K

# the seed of every tab, link and command line: torch.Generator takes up to 2**64 - 1, numpy's default 2**32 - 1;
# one limit for all, so a seed written down in one place works in every other
SEED_MAX = 2**32 - 1


@dataclass(frozen=True)
class Knob:
    field: str  # the SamplerSettings field it sets
    label: str  # as on the page, so a message names the control the learner sees
    lo: float
    hi: float
    step: float
    off: float  # the value that turns the stage off
    allowed: str  # the range in words, for the message
    whole: bool = False
    min_positive: float = 0.0  # values in (0, min_positive) are refused (a temperature of 1e-300 divides to inf)

    def ok(self, x: float) -> bool:
        return self.lo <= x <= self.hi and not 0 < x < self.min_positive

    def check(self, value, hi: float | None = None, note: str = ""):
        """`value` as a number in this knob's range (or up to `hi`), or a ValueError naming the knob by its label."""
        if self.whole:
            return values.whole(
                self.label, value, int(self.lo), int(self.hi if hi is None else hi), note or self.allowed
            )
        return values.checked(self.label, value, self.ok, self.allowed)


def _knob(stage) -> Knob:
    t = stage.teaching
    return Knob(
        field=stage.field,
        label=stage.control,
        lo=t.lo,
        hi=t.hi,
        step=t.step,
        off=stage.neutral,
        allowed=t.allowed,
        whole=t.whole,
        min_positive=t.min_positive,
    )


KNOBS = {stage.field: _knob(stage) for stage in STAGES.values()}
ORDER_LABEL = "Engine order"


def check_seed(value, label: str = "Seed") -> int:
    return values.whole(label, value, 0, SEED_MAX)


def settings_from(given: Mapping[str, object], *, vocab_size: int | None = None) -> SamplerSettings:
    """`SamplerSettings` from values keyed by its fields (a knob not given is off; `order` defaults to transformers),
    each checked against its knob's range with a message that names the knob as labelled. With `vocab_size`, top-k
    stops at the model's vocabulary."""
    unknown = set(given) - set(KNOBS) - {"order"}
    if unknown:
        raise TypeError(f"not sampler knobs: {sorted(unknown)}")  # a programmer's mistake, not the learner's
    checked = {}
    for field, value in given.items():
        if field == "order":
            checked[field] = values.choice(ORDER_LABEL, value, ORDERS)
        elif field == TOP_K.field and vocab_size is not None and vocab_size < KNOBS[field].hi:
            checked[field] = KNOBS[field].check(value, vocab_size, f"0 = off; this model has {vocab_size} tokens")
        else:
            checked[field] = KNOBS[field].check(value)
    return SamplerSettings(**checked)
