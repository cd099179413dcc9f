"""Every sampler knob a person sets (on a page, in a shared link, on the command line): its label, its range and its
"off" value, written once, and the one builder that turns such values into `SamplerSettings`.

The engine's own ranges are `samplers.ALLOWED` (and `SamplerSettings`' temperature rule). A knob's range here is the
engine's, except where a narrower teaching range is stated beside it: beyond it a slider would spend its length on
values that only show noise.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from decoding import values
from decoding.pipeline import MIN_DIVISOR, ORDERS, SamplerSettings

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


KNOBS = {
    knob.field: knob
    for knob in (
        # teaching range: the engine takes up to 100; above 3 every distribution is flat noise
        Knob(
            field="temperature",
            label="Temperature",
            lo=0,
            hi=3,
            step=0.05,
            off=1.0,
            allowed=f"0 (greedy) or between {MIN_DIVISOR} and 3",
            min_positive=MIN_DIVISOR,
        ),
        # teaching range: the engine takes any k >= 0; 200 candidates is more than a chart can show
        Knob(field="top_k", label="Top-k", lo=0, hi=200, step=1, off=0, allowed="0 = off", whole=True),
        # the engine's (0, 1], from 0.01: a smaller top-p keeps only the top token, as greedy does
        Knob(field="top_p", label="Top-p", lo=0.01, hi=1, step=0.01, off=1.0, allowed="between 0.01 and 1 (1 = off)"),
        # the engine's [0, 1), to 0.99
        Knob(field="min_p", label="Min-p", lo=0, hi=0.99, step=0.01, off=0.0, allowed="between 0 and 0.99 (0 = off)"),
        Knob(
            field="typical_p",
            label="Typical-p",
            lo=0.01,
            hi=1,
            step=0.01,
            off=1.0,
            allowed="between 0.01 and 1 (1 = off)",
        ),
        Knob(
            field="epsilon", label="Epsilon", lo=0, hi=0.99, step=0.001, off=0.0, allowed="between 0 and 0.99 (0 = off)"
        ),
        Knob(field="eta", label="Eta", lo=0, hi=0.99, step=0.001, off=0.0, allowed="between 0 and 0.99 (0 = off)"),
        # teaching range: the engine takes any value > 0; beyond [0.5, 2] the model only repeats or only avoids
        Knob(
            field="repetition_penalty",
            label="Repetition penalty",
            lo=0.5,
            hi=2,
            step=0.05,
            off=1.0,
            allowed="between 0.5 and 2 (1 = off)",
        ),
        Knob(
            field="presence_penalty",
            label="Presence penalty",
            lo=-2,
            hi=2,
            step=0.1,
            off=0.0,
            allowed="between -2 and 2 (0 = off)",
        ),
        Knob(
            field="frequency_penalty",
            label="Frequency penalty",
            lo=-2,
            hi=2,
            step=0.1,
            off=0.0,
            allowed="between -2 and 2 (0 = off)",
        ),
    )
}
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
        elif field == "top_k" and vocab_size is not None and vocab_size < KNOBS["top_k"].hi:
            checked[field] = KNOBS[field].check(value, vocab_size, f"0 = off; this model has {vocab_size} tokens")
        else:
            checked[field] = KNOBS[field].check(value)
    return SamplerSettings(**checked)
