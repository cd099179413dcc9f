"""The samplers side by side on the same logits: each strategy alone, the engines' stage orders, and a
temperature sweep.

Each strategy alone runs on the raw logits (temperature 1), so the panels differ only by the rule that
made them. The sweep shows the lesson of the references: as temperature flattens the distribution,
top-p's nucleus fills with tail tokens (its cut is a cumulative mass, and a flat tail holds mass), while
min-p's floor is a fraction of the top token's probability and keeps few.
Min-p: arXiv:2407.01082. Everything returned is small plain data (lists, ints, floats).
"""

import math
import re
from dataclasses import dataclass, replace

import torch

from decoding import pipeline, samplers
from decoding.pipeline import ORDERS, SamplerSettings, process
from decoding.stages import FILTERS, MIN_P, STAGES, TEMPERATURE, TOP_P

MAX_VOCAB = 262_144  # the largest vocabularies in use
FORMAT = "comma-separated numbers like `10, 9.9, 5`; `0 x 100` repeats 0 100 times; `2 to -4 x 50` spaces 50 evenly"
# the reference exercise: "top 5 are [10, 9.9, 9.8, 5, 4] and the rest are around 0", vocabulary 32,000;
# "around 0" is taken as exactly 0, so every count below can be worked out by hand
PRESETS = {
    "reference exercise": "10, 9.9, 9.8, 5, 4, 0 x 31995",
    "confident": "10, 5, 4, 3, 2 to -4 x 996",
    "flat": "3 to 0 x 1000",
    "two-way tie": "6, 6, 3, 2, 1 to -3 x 996",
}
# the project function behind each panel (the UI shows its source)
SOURCE = {
    "greedy": pipeline.select,
    **{name: pipeline.MATH[name] for name in (TEMPERATURE.name, *FILTERS)},
}


@dataclass(frozen=True)
class Alone:
    """One strategy applied alone. `ids` are the top-N tokens by raw logit; `before` their model
    probabilities (whole vocabulary), `after` what this strategy alone would sample them with."""

    name: str  # greedy, temperature, top_k, top_p, min_p, typical, epsilon, eta
    setting: str  # e.g. "p = 0.9"
    value: float | None  # the setting's value (None for greedy)
    usual: bool  # True: the setting was off, so the usual value is shown
    kept: int
    vocab: int
    mass: float  # the model's probability of the kept tokens
    ids: list[int]
    before: list[float]
    after: list[float]
    keeps: list[bool]
    rest: int  # how many tokens lie outside the top N
    rest_kept: float  # the model's probability of the kept tokens outside the top N
    rest_removed: float  # ... of the removed ones
    rest_after: float  # what this strategy samples the rest with, together


def parse_logits(text: str) -> torch.Tensor:
    """Logits typed by a person -> float32 (V,). Entries are numbers, `value x count` or `first to last x count`."""
    entries = [e.strip() for e in str(text).replace("\n", ",").split(",")]
    entries = [e for e in entries if e]
    if not entries:
        raise ValueError(f"no logits given; write {FORMAT}")
    values: list[float] = []
    for i, entry in enumerate(entries, 1):
        m = re.fullmatch(r"(\S+?)(?:\s+to\s+(\S+?))?\s*[x×*]\s*(\d+)", entry)
        first, last, count = (m.group(1), m.group(2) or m.group(1), int(m.group(3))) if m else (entry, entry, 1)
        a, b = _number(first, i, entry), _number(last, i, entry)
        if count < 1:
            raise ValueError(f"entry {i} ({entry!r}) repeats {count} times; the count after x must be 1 or more")
        if len(values) + count > MAX_VOCAB:
            raise ValueError(f"entry {i} ({entry!r}) makes more than {MAX_VOCAB:,} logits, the most allowed")
        values.extend(torch.linspace(a, b, count).tolist() if a != b else [a] * count)
    if len(values) < 2:
        raise ValueError(f"give at least 2 logits (got {len(values)}) and at most {MAX_VOCAB:,}; write {FORMAT}")
    return torch.tensor(values, dtype=torch.float32)  # (V,)


def _number(text: str, i: int, entry: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"entry {i} ({entry!r}) is not a number; write {FORMAT}") from None
    if not math.isfinite(value):
        raise ValueError(f"entry {i} ({entry!r}) must be a finite number, not inf or nan; write {FORMAT}")
    return value


def preset_logits(name: str) -> torch.Tensor:
    if name not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {name!r}")
    return parse_logits(PRESETS[name])


def each_strategy_alone(
    logits: torch.Tensor, settings: SamplerSettings, top_n: int = 20, probs: torch.Tensor | None = None
) -> list[Alone]:
    """Greedy, temperature, top-k, top-p, min-p (and typical/epsilon/eta when set), each alone on `logits` (V,).
    `probs`: their softmax, when the caller has it already (`pipeline.Processed.probs_before`)."""
    x = _vector(logits)
    probs = torch.softmax(x, dim=-1) if probs is None else probs  # (V,)
    top = torch.topk(x, min(top_n, x.numel())).indices  # (N,)
    greedy = torch.zeros_like(x, dtype=torch.bool)
    greedy[torch.argmax(x)] = True
    out = [_alone("greedy", "argmax", None, False, greedy, probs, top, greedy.float())]
    # a strategy that is off in the settings is shown at its usual value, so every panel teaches something
    t = settings.temperature
    usual = t in (0, TEMPERATURE.neutral)
    t = TEMPERATURE.usual if usual else t
    warm = torch.softmax(pipeline.apply_stage(TEMPERATURE, x, (), t), dim=-1)  # (V,)
    setting = f"{TEMPERATURE.symbol} = {t:g}"
    out.append(_alone(TEMPERATURE.name, setting, t, usual, torch.ones_like(greedy), probs, top, warm))
    for name in FILTERS:
        stage = STAGES[name]
        value = getattr(settings, stage.field)
        usual = not stage.enabled(value)
        if usual and stage.usual is None:
            continue
        value = stage.usual if usual else value
        keep = pipeline.apply_stage(stage, x, (), value)  # (V,) bool
        after = torch.softmax(samplers.apply_mask(x, keep), dim=-1)
        out.append(_alone(name, f"{stage.symbol} = {value:g}", value, usual, keep, probs, top, after))
    return out


def _alone(name, setting, value, usual, keep, probs, top, after) -> Alone:
    outside = torch.ones_like(keep)
    outside[top] = False  # (V,) True for the tokens beyond the top N
    return Alone(
        name=name,
        setting=setting,
        value=value,
        usual=usual,
        kept=int(keep.sum()),
        vocab=keep.numel(),
        mass=float(probs[keep].sum()),
        ids=top.tolist(),
        before=probs[top].tolist(),
        after=after[top].tolist(),
        keeps=keep[top].tolist(),
        rest=int(outside.sum()),
        rest_kept=float(probs[outside & keep].sum()),
        rest_removed=float(probs[outside & ~keep].sum()),
        rest_after=float(after[outside].sum()),
    )


@dataclass(frozen=True)
class OrderResult:
    order: str
    stages: tuple[str, ...]  # the stages that ran, in this engine's order
    kept: int
    mass: float  # the model's probability of the kept tokens


@dataclass(frozen=True)
class OrderComparison:
    orders: list[OrderResult]
    differing: list[tuple[int, float, tuple[str, ...]]]  # (id, model probability, orders that keep it)
    n_differing: int  # all tokens some order keeps and another removes; `differing` lists the most probable


def compare_orders(
    logits, settings: SamplerSettings, all_ids=(), generated_ids=(), max_rows: int = 10, known=None
) -> OrderComparison:
    """The same settings run in each engine's stage order (transformers, vllm, llama.cpp) on `logits` (V,).
    `known`: these logits already processed with `settings` (a `pipeline.Processed`, no grammar), reused as is."""
    x = _vector(logits)
    probs = known.probs_before if known is not None else torch.softmax(x, dim=-1)  # (V,)
    runs: dict[str, pipeline.Processed] = {}
    done = [known] if known is not None and known.stages == settings.stages() else []
    for o in ORDERS:
        each = replace(settings, order=o)
        # orders that run the same stages in the same sequence give the same result: it is computed once
        same = next((r for r in [*runs.values(), *done] if r.stages == each.stages()), None)
        runs[o] = same or process(x, each, list(all_ids), list(generated_ids))
    masks = torch.stack([r.removed_by == -1 for r in runs.values()])  # (3, V)
    results = [OrderResult(o, r.stages, int(m.sum()), float(probs[m].sum())) for (o, r), m in zip(runs.items(), masks)]
    disagree = torch.nonzero(masks.any(0) & ~masks.all(0)).flatten()  # (D,)
    ranked = disagree[torch.argsort(probs[disagree], descending=True)][:max_rows].tolist()
    differing = [(i, float(probs[i]), tuple(o for o, m in zip(ORDERS, masks) if bool(m[i]))) for i in ranked]
    return OrderComparison(results, differing, int(disagree.numel()))


@dataclass(frozen=True)
class Sweep:
    temperatures: list[float]
    top_p: float
    min_p: float
    vocab: int
    top_p_kept: list[int]
    min_p_kept: list[int]
    top_p_mass: list[float]  # probability (at that temperature) of what each keeps
    min_p_mass: list[float]


TEMPERATURES = [round(0.1 * i, 1) for i in range(1, 31)]  # 0.1 -> 3.0


def temperature_sweep(logits, temperatures=TEMPERATURES, top_p=TOP_P.usual, min_p=MIN_P.usual) -> Sweep:
    """How many tokens top-p and min-p keep (and their mass) after each temperature, on `logits` (V,); by default
    each at its usual value."""
    x = _vector(logits)
    counts: dict[str, list] = {"pk": [], "mk": [], "pm": [], "mm": []}
    for t in temperatures:
        warm = pipeline.apply_stage(TEMPERATURE, x, (), t)  # (V,)
        probs = torch.softmax(warm, dim=-1)
        for key, keep in (
            ("p", pipeline.apply_stage(TOP_P, warm, (), top_p)),
            ("m", pipeline.apply_stage(MIN_P, warm, (), min_p)),
        ):
            counts[key + "k"].append(int(keep.sum()))
            counts[key + "m"].append(float(probs[keep].sum()))
    return Sweep(
        temperatures=list(temperatures),
        top_p=top_p,
        min_p=min_p,
        vocab=x.numel(),
        top_p_kept=counts["pk"],
        min_p_kept=counts["mk"],
        top_p_mass=counts["pm"],
        min_p_mass=counts["mm"],
    )


def _vector(logits) -> torch.Tensor:
    x = torch.as_tensor(logits).detach().to(dtype=torch.float32)
    if x.dim() != 1 or x.numel() < 2:
        raise ValueError(f"logits must be one vector (V,) of at least 2 numbers, got shape {tuple(x.shape)}")
    return x
