"""One object per sampler stage, holding everything the app knows of it: its name in an engine's order, the
`SamplerSettings` field that sets it, the engine's range and its neutral ("off") value, its kind (new logits or a
keep-mask), how the page labels and draws it, and the range a slider teaches with. Plain data, no torch:
visuals.theme reads the colours and labels, decoding.knobs the ranges.

transformers writes one class per processor, validated in its `__init__`; here each stage is one `Stage`, and every
table elsewhere (the pipeline's orders and filters, the knobs, the sandbox's panels, the charts' colours) reads from
`STAGES`. Each stage is also a constant here (`stages.MIN_P`): code that means one stage names it by that constant
(`MIN_P.name`, `MIN_P.field`), never by a string of its own. Adding a stage touches this file and its test.

Penalties and temperature return new logits; filters return a keep-mask (True = kept). The math is in
`decoding.samplers`, one pure function per stage, each agreeing exactly with its transformers class; the pipeline
(`decoding.pipeline.MATH`) pairs each stage with its function, so that neither module reads the other.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

PENALTY, WARP, FILTER = "penalty", "warp", "filter"
# a grammar's keep-mask runs in an engine's order under this name: one more filter, with no knob and so no `Stage`
# (decoding.constrained builds its mask; decoding.pipeline places it in each engine's order)
GRAMMAR = "grammar"
MIN_DIVISOR = 0.01  # smallest temperature / repetition penalty the pipeline accepts: below it float32 logits overflow


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class Teaching:
    """A slider's range: the engine's own, or a narrower one where its ends would only show noise (said beside)."""

    lo: float
    hi: float
    step: float
    allowed: str  # the range in words, for a message that names the control
    whole: bool = False
    min_positive: float = 0.0  # values in (0, min_positive) are refused (a temperature of 1e-300 divides to inf)


@dataclass(frozen=True)
class Stage:
    name: str  # as an engine's order names it: "min_p"
    field: str  # the SamplerSettings field that sets it: "min_p"
    kind: str  # PENALTY and WARP return logits, FILTER a keep-mask
    neutral: float  # the value that turns it off
    allowed: str  # the engine's range, in words
    accepts: Callable[[object], bool]  # the engine's range, as a test
    label: str  # as a chart names it: "min-p"
    control: str  # as a control is labelled: "Min-p"
    teaching: Teaching
    symbol: str = ""  # in a panel's setting: "min-p = 0.1"
    counts_prompt: bool = False  # a penalty that reads the prompt's ids too, not only the generated ones (CTRL's rule)
    colour: str = ""  # a filter's "removed by" colour (Okabe-Ito; visuals.theme reads it)
    usual: float | None = None  # a common value, shown in the sandbox when the learner left it off

    def check(self, value) -> None:
        """Raise a ValueError that names the knob, the bad value and the engine's range."""
        if not self.accepts(value):
            raise ValueError(f"{self.field} must be {self.allowed}, got {value!r}")

    def enabled(self, value) -> bool:
        return value != self.neutral


def _temperature_ok(t) -> bool:
    return _finite(t) and (t == 0 or MIN_DIVISOR <= t <= 100)


REPETITION = Stage(
    name="repetition",
    field="repetition_penalty",
    kind=PENALTY,
    neutral=1.0,
    # the sampler takes any penalty > 0; SamplerSettings refuses one under MIN_DIVISOR, which overflows
    allowed="a finite number > 0 (1.0 = off)",
    accepts=lambda x: _finite(x) and x > 0,
    counts_prompt=True,  # CTRL's rule: a token the prompt holds is penalised too
    label="repetition penalty",
    control="Repetition penalty",
    # teaching range: the engine takes any value > 0; beyond [0.5, 2] the model only repeats or only avoids
    teaching=Teaching(0.5, 2, 0.05, "between 0.5 and 2 (1 = off)"),
)
FREQUENCY = Stage(
    name="frequency",
    field="frequency_penalty",
    kind=PENALTY,
    neutral=0.0,
    allowed="in [-2, 2] (0 = off)",
    accepts=lambda x: _finite(x) and -2 <= x <= 2,
    label="frequency penalty",
    control="Frequency penalty",
    teaching=Teaching(-2, 2, 0.1, "between -2 and 2 (0 = off)"),
)
PRESENCE = Stage(
    name="presence",
    field="presence_penalty",
    kind=PENALTY,
    neutral=0.0,
    allowed="in [-2, 2] (0 = off)",
    accepts=lambda x: _finite(x) and -2 <= x <= 2,
    label="presence penalty",
    control="Presence penalty",
    teaching=Teaching(-2, 2, 0.1, "between -2 and 2 (0 = off)"),
)
TEMPERATURE = Stage(
    name="temperature",
    field="temperature",
    kind=WARP,
    neutral=1.0,
    allowed=f"0 (greedy) or in [{MIN_DIVISOR}, 100]",
    accepts=_temperature_ok,
    label="temperature",
    control="Temperature",
    # teaching range: the engine takes up to 100; above 3 every distribution is flat noise
    teaching=Teaching(0, 3, 0.05, f"0 (greedy) or between {MIN_DIVISOR} and 3", min_positive=MIN_DIVISOR),
    symbol="T",
    usual=0.7,
)
TOP_K = Stage(
    name="top_k",
    field="top_k",
    kind=FILTER,
    neutral=0,
    allowed="an integer >= 0 (0 = off)",
    accepts=lambda x: _whole(x) and x >= 0,
    label="top-k",
    control="Top-k",
    # teaching range: the engine takes any k >= 0; 200 candidates is more than a chart can show
    teaching=Teaching(0, 200, 1, "0 = off", whole=True),
    symbol="k",
    colour="#D55E00",  # vermillion
    usual=50,
)
TOP_P = Stage(
    name="top_p",
    field="top_p",
    kind=FILTER,
    neutral=1.0,
    allowed="in (0, 1] (1 = off)",
    accepts=lambda x: _finite(x) and 0 < x <= 1,
    label="top-p",
    control="Top-p",
    # the engine's (0, 1], from 0.01: a smaller top-p keeps only the top token, as greedy does
    teaching=Teaching(0.01, 1, 0.01, "between 0.01 and 1 (1 = off)"),
    symbol="p",
    colour="#56B4E9",  # sky blue
    usual=0.9,
)
MIN_P = Stage(
    name="min_p",
    field="min_p",
    kind=FILTER,
    neutral=0.0,
    allowed="in [0, 1) (0 = off)",
    accepts=lambda x: _finite(x) and 0 <= x < 1,
    label="min-p",
    control="Min-p",
    # the engine's [0, 1), to 0.99
    teaching=Teaching(0, 0.99, 0.01, "between 0 and 0.99 (0 = off)"),
    symbol="min-p",
    colour="#009E73",  # bluish green
    usual=0.1,
)
TYPICAL = Stage(
    name="typical",
    field="typical_p",
    kind=FILTER,
    neutral=1.0,
    allowed="in (0, 1] (1 = off)",
    accepts=lambda x: _finite(x) and 0 < x <= 1,
    label="typical-p",
    control="Typical-p",
    teaching=Teaching(0.01, 1, 0.01, "between 0.01 and 1 (1 = off)"),
    symbol="typical-p",
    colour="#F0E442",  # yellow
)
EPSILON = Stage(
    name="epsilon",
    field="epsilon",
    kind=FILTER,
    neutral=0.0,
    allowed="in [0, 1) (0 = off)",
    accepts=lambda x: _finite(x) and 0 <= x < 1,
    label="epsilon",
    control="Epsilon",
    teaching=Teaching(0, 0.99, 0.001, "between 0 and 0.99 (0 = off)"),
    symbol="ε",
    colour="#999999",
)
ETA = Stage(
    name="eta",
    field="eta",
    kind=FILTER,
    neutral=0.0,
    allowed="in [0, 1) (0 = off)",
    accepts=lambda x: _finite(x) and 0 <= x < 1,
    label="eta",
    control="Eta",
    teaching=Teaching(0, 0.99, 0.001, "between 0 and 0.99 (0 = off)"),
    symbol="η",
    colour="#666666",
)

# in the order every engine applies the penalties, then the rest as transformers runs them
STAGES = {
    stage.name: stage
    for stage in (REPETITION, FREQUENCY, PRESENCE, TEMPERATURE, TOP_K, TOP_P, MIN_P, TYPICAL, EPSILON, ETA)
}
PENALTIES = tuple(name for name, stage in STAGES.items() if stage.kind == PENALTY)
FILTERS = tuple(name for name, stage in STAGES.items() if stage.kind == FILTER)
