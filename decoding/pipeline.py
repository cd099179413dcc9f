"""The sampler pipeline: the stages in a named order, each seeing the survivors of the one before,
then one selecting step.

Penalties can change which token is most likely; temperature and the truncations cannot (they only
reshape or cut the tail). Engines order the stages differently, and the order changes the result:
probabilities [.5, .3, .1, .1] with top-p 0.6 and min-p 0.3 keep 2 tokens in transformers' order
(top-p first keeps .5 and .3; min-p then keeps both) and 1 in vLLM's (min-p first keeps .5 and .3,
renormalised to .625/.375, and top-p 0.6 then keeps only the first).
"""

from dataclasses import asdict, dataclass
from functools import cached_property

import torch

from decoding import samplers
from decoding.stages import (
    EPSILON,
    ETA,
    FILTERS,
    FREQUENCY,
    GRAMMAR,
    MIN_DIVISOR,
    MIN_P,
    PENALTIES,
    PENALTY,
    PRESENCE,
    REPETITION,
    STAGES,
    TEMPERATURE,
    TOP_K,
    TOP_P,
    TYPICAL,
    Stage,
)

# each stage's math, one decoding.samplers function (the sandbox shows its source): a penalty's takes the logits, the
# ids it counts and the value; a warp's or a filter's the logits and the value. Here, where both are read, so that the
# stages (plain data) and the samplers (pure math) never read each other.
MATH = {
    REPETITION.name: samplers.apply_repetition_penalty,
    FREQUENCY.name: samplers.apply_frequency_penalty,
    PRESENCE.name: samplers.apply_presence_penalty,
    TEMPERATURE.name: samplers.apply_temperature,
    TOP_K.name: samplers.top_k_mask,
    TOP_P.name: samplers.top_p_mask,
    MIN_P.name: samplers.min_p_mask,
    TYPICAL.name: samplers.typical_mask,
    EPSILON.name: samplers.epsilon_mask,
    ETA.name: samplers.eta_mask,
}


def apply_stage(stage: Stage, logits: torch.Tensor, ids, value) -> torch.Tensor:
    """One stage on `logits` (V,) or (B, V): `value` checked against the stage's range (a ValueError naming the knob,
    the value and the range), then its math: new logits, or a keep-mask for a filter. `ids`: the ids a penalty counts
    (with the prompt's for a stage that `counts_prompt`, else the generated ones alone); the others ignore it."""
    stage.check(value)
    fn = MATH[stage.name]
    return fn(logits, ids, value) if stage.kind == PENALTY else fn(logits, value)


def _names(*stages) -> tuple[str, ...]:
    return tuple(stage.name for stage in stages)


# each order written once; the reason beside it
ORDERS = {
    # transformers' generate(): processors (penalties), then warpers in this order (generation/utils.py)
    "transformers": (*PENALTIES, *_names(TEMPERATURE, TOP_K, TOP_P, MIN_P, TYPICAL, EPSILON, ETA)),
    # vLLM v1 sampler: penalties, temperature, then min-p before top-k/top-p (typical/epsilon/eta: not in vLLM)
    "vllm": (*PENALTIES, *_names(TEMPERATURE, MIN_P, TOP_K, TOP_P, TYPICAL, EPSILON, ETA)),
    # llama.cpp's default chain: truncations on the raw logits, temperature last before the draw
    "llama.cpp": (*PENALTIES, *_names(TOP_K, TYPICAL, TOP_P, MIN_P, EPSILON, ETA, TEMPERATURE)),
}
# where each engine applies a grammar's keep-mask (decoding.constrained): one more filter, placed by each engine
GRAMMAR_ORDERS = {
    # transformers: a grammar comes as a user LogitsProcessor; _get_logits_processor (generation/utils.py) appends
    # user processors after its own (the penalties) and only then the sampling warpers, so truncations see legal tokens
    "transformers": (*PENALTIES, GRAMMAR, *ORDERS["transformers"][len(PENALTIES) :]),
    # vLLM v1: the structured-output bitmask is applied to the logits in the model runner (apply_grammar_bitmask in
    # v1/worker/gpu_model_runner.py) before the sampler runs penalties, temperature and the truncations
    "vllm": (GRAMMAR, *ORDERS["vllm"]),
    # llama.cpp (common/sampling.cpp, common_sampler_sample): the chain draws first and the grammar checks only the
    # drawn token; an illegal draw makes it reset the logits, apply the grammar first, then run the chain again
    "llama.cpp": (*ORDERS["llama.cpp"], GRAMMAR),
}
# llama.cpp's recovery from an illegal draw: the same chain with the grammar first (the others never need one)
GRAMMAR_RESAMPLE_ORDERS = {"llama.cpp": (GRAMMAR, *ORDERS["llama.cpp"])}


@dataclass(frozen=True)
class SamplerSettings:
    """Every knob of the pipeline. Defaults are all off; temperature 0 means greedy (argmax)."""

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    min_p: float = 0.0
    typical_p: float = 1.0
    epsilon: float = 0.0
    eta: float = 0.0
    repetition_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    order: str = "transformers"

    def __post_init__(self):
        r = self.repetition_penalty
        # a divisor below MIN_DIVISOR overflows float32 logits to inf, and the probabilities become NaN (temperature's
        # own range says so; a repetition penalty's sampler takes any value > 0)
        if isinstance(r, (int, float)) and 0 < r < MIN_DIVISOR:
            raise ValueError(f"repetition_penalty must be at least {MIN_DIVISOR} (1.0 = off), got {r!r}")
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {sorted(ORDERS)}, got {self.order!r}")
        # every knob against its stage's range (decoding.stages), so a bad value fails here, named
        for stage in STAGES.values():
            stage.check(getattr(self, stage.field))

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def enabled(self, name: str) -> bool:
        """Whether a stage does anything with these settings. Greedy skips every warper, as generate() does."""
        if self.greedy and name not in PENALTIES:
            return False
        stage = STAGES[name]
        return stage.enabled(getattr(self, stage.field))

    def stages(self) -> tuple[str, ...]:
        """The stages these settings run, in their order."""
        return tuple(name for name in ORDERS[self.order] if self.enabled(name))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Processed:
    """One step's logits through the pipeline. Tensors are (V,) float32; `removed_by` holds the
    index into `stages` of the filter that removed each token, -1 for survivors. `penalized` is the logits as the
    first stage that is not a penalty found them: what the penalties left, since every order runs them first (with
    a grammar that comes first, vLLM's, it is the raw logits)."""

    raw: torch.Tensor
    final: torch.Tensor
    removed_by: torch.Tensor
    stages: tuple[str, ...]
    kept: tuple[int, ...]
    penalized: torch.Tensor | None = None

    @cached_property  # a softmax over the vocabulary: computed once, however often a record reads it
    def probs_before(self) -> torch.Tensor:
        return torch.softmax(self.raw, dim=-1)

    @cached_property
    def probs_after(self) -> torch.Tensor:
        return torch.softmax(self.final, dim=-1)


def process(
    logits: torch.Tensor, settings: SamplerSettings, all_ids, generated_ids, grammar=None, resample=False
) -> Processed:
    """Run the enabled stages in the settings' order on a float32 copy of `logits` (V,). `grammar`, a (V,) bool
    keep-mask of the legal tokens, adds the grammar stage where the engine puts it (GRAMMAR_ORDERS, or with
    `resample` GRAMMAR_RESAMPLE_ORDERS), even at temperature 0; without it the orders are ORDERS, unchanged."""
    raw = logits.detach().to(dtype=torch.float32).clone()  # (V,)
    x, penalized = raw, None
    removed_by = torch.full(raw.shape, -1, dtype=torch.int8, device=raw.device)  # (V,)
    stages, kept = [], []
    order = ORDERS if grammar is None else GRAMMAR_RESAMPLE_ORDERS if resample else GRAMMAR_ORDERS
    for name in order[settings.order]:
        if name != GRAMMAR and not settings.enabled(name):
            continue
        if penalized is None and name not in PENALTIES:
            penalized = x
        if name == GRAMMAR:
            out = grammar
        else:
            stage = STAGES[name]
            ids = all_ids if stage.counts_prompt else generated_ids
            out = apply_stage(stage, x, ids, getattr(settings, stage.field))
        if name in FILTERS or name == GRAMMAR:
            removed_by[(removed_by == -1) & ~out] = len(stages)
            x = samplers.apply_mask(x, out)
        else:
            x = out
        stages.append(name)
        kept.append(int((removed_by == -1).sum()))
    return Processed(
        raw=raw,
        final=x,
        removed_by=removed_by,
        stages=tuple(stages),
        kept=tuple(kept),
        penalized=x if penalized is None else penalized,
    )


def select(final: torch.Tensor, settings: SamplerSettings, generator: torch.Generator | None) -> int:
    """The last step. Temperature 0: argmax, no randomness at all. Otherwise one draw from the
    renormalised survivors, using the given generator (as generate() draws with torch.multinomial)."""
    if settings.greedy:
        return int(torch.argmax(final))
    probs = torch.softmax(final.unsqueeze(0), dim=-1)  # (1, V)
    return int(torch.multinomial(probs, num_samples=1, generator=generator))
