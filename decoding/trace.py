"""What a run leaves behind: one Step per generated token, and the Trace that holds them.

Small plain data only (the top-N candidates of each step, never the full vocabulary, never a
tensor), so a trace is cheap to deep-copy, to keep per browser session, and to save as JSON or CSV
and replay without a model.
"""

import csv
import io
import json
from dataclasses import asdict, dataclass, field, fields


@dataclass
class Candidate:
    id: int
    text: str
    logit: float
    prob_before: float  # the model's probability (softmax of the raw logits, whole vocabulary)
    prob_after: float  # after the pipeline (0 if removed)
    removed_by: str | None = None  # the filter that removed it, None if it survived


@dataclass
class Step:
    index: int  # 0-based position among the generated tokens
    phase: str  # "prefill" or "decode": the pass that produced this distribution; "grammar": forced, no distribution
    token_id: int
    token_text: str
    prob_before: float  # the model's own probability of it
    prob_after: float  # probability the chosen token was selected with (after the pipeline)
    rank: int  # 1 = the model's most probable token
    forced: bool
    top: list[Candidate]
    stages: list[tuple[str, int]]  # (stage, tokens kept after it), in the order they ran
    kept_mass: float  # the model's probability mass on the tokens that survived
    entropy_bits: float  # of the model's distribution
    settings: dict  # the sampler settings this step used
    forward_ms: float
    sample_ms: float
    kv_bytes: int  # KV cache size after the forward pass that produced this distribution
    context_len: int  # tokens the model had seen when it produced this distribution
    rows: int = 1  # sessions whose tokens shared that forward pass (decoding.serving batches them)
    # how that pass ran, in decoding.passes' words: what batched it (MODES: "solo", "packed", "alone", "lens",
    # "cached", "prefix") and what ran (KINDS: "eager", "static" the static cache's step, "captured" its CUDA graph)
    pass_mode: str = "solo"
    noise: float = 0.0  # how far sharing the pass could move a logit (0 when computed alone)
    pass_kind: str = "eager"
    # which implementation computed its logits (IMPLS: "modules", "scripted") and where they come from (ORIGINS:
    # "computed", "fallback", "pool", "in flight", "shared"); the defaults are what a trace saved before ran
    pass_impl: str = "modules"
    pass_origin: str = "computed"
    # with a grammar set (decoding.constrained); the defaults mean none, so traces saved before still load
    allowed: int | None = None  # tokens the grammar allowed at this step
    illegal_mass: float = 0.0  # the model's probability on the tokens the grammar refused
    mask_ms: float = 0.0  # time to compute the grammar's mask
    grammar_forced: bool = False  # the grammar's only continuation (fast-forward): not sampled, no pass of its own
    resampled_from: int | None = None  # llama.cpp's order: the illegal token its chain drew before resampling

    def candidate(self, token_id: int) -> Candidate | None:
        return next((c for c in self.top if c.id == token_id), None)


@dataclass
class Trace:
    model_id: str
    model_label: str
    device: str
    dtype: str
    prompt: str
    prompt_ids: list[int]
    prompt_tokens: list[str]
    seed: int
    max_new_tokens: int
    stop_strings: list[str]
    steps: list[Step] = field(default_factory=list)
    prefill_ms: float = 0.0
    # the prompt's first computation, when this run's prefill copied it from the prefix cache (prefill_ms is the copy)
    prefill_computed_ms: float | None = None
    stop_reason: str | None = None
    text: str = ""  # the completion as shown: stop string excluded
    held_text: str = ""  # text held back because it could still start a stop string

    @property
    def token_ids(self) -> list[int]:
        return [s.token_id for s in self.steps]

    @property
    def decode_ms(self) -> list[float]:
        return [s.forward_ms for s in self.steps if s.phase == "decode"]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["token_ids"] = self.token_ids
        d["timing"] = {"prefill_ms": self.prefill_ms, "decode_ms": self.decode_ms}
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict) -> "Trace":
        names = {f.name for f in fields(cls)}
        trace = cls(**{k: v for k, v in d.items() if k in names and k != "steps"})
        trace.steps = [_step_from_dict(s) for s in d.get("steps", [])]
        return trace

    @classmethod
    def from_json(cls, text: str) -> "Trace":
        return cls.from_dict(json.loads(text))

    def to_csv(self) -> str:
        out = io.StringIO()
        columns = ["index", "phase", "token_id", "token_text", "prob_before", "prob_after", "rank", "forced"]
        columns += ["kept_mass", "entropy_bits", "forward_ms", "sample_ms", "kv_bytes", "context_len"]
        writer = csv.writer(out)
        writer.writerow([*columns, "kept_after_each_stage"])
        for s in self.steps:
            stages = " ".join(f"{name}:{kept}" for name, kept in s.stages)
            writer.writerow([getattr(s, c) for c in columns] + [stages])
        return out.getvalue()


# traces saved before the rename: a candidate's "prob" was before the pipeline, a step's "prob" after it
OLD_NAMES = {"candidate": {"prob": "prob_before"}, "step": {"prob": "prob_after"}}
# traces saved before a pass had a kind named a static run's one-token step in its mode: a pass of its own
KINDS_SAVED_AS_MODES = ("static", "captured")


def _renamed(d: dict, names: dict[str, str]) -> dict:
    return {names.get(k, k): v for k, v in d.items()}


def _step_from_dict(d: dict) -> Step:
    d = _renamed(d, OLD_NAMES["step"])
    if d.get("pass_mode") in KINDS_SAVED_AS_MODES:
        d["pass_kind"], d["pass_mode"] = d["pass_mode"], "solo"
    d["top"] = [Candidate(**_renamed(c, OLD_NAMES["candidate"])) for c in d["top"]]
    d["stages"] = [tuple(x) for x in d["stages"]]
    return Step(**d)
