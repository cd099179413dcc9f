"""A speculative run as plain data: one `Round` per verify pass, each with one `Check` per verified position.

Everything here is plain Python (ids, texts, floats), small enough for a figure or JSON: the top few tokens of
each distribution, never the whole vocabulary, never a tensor.
"""

from dataclasses import asdict, dataclass, field

PROMPT_LOOKUP, EARLY_EXIT = "prompt-lookup", "early-exit"
SOURCES = (PROMPT_LOOKUP, EARLY_EXIT)


@dataclass
class Match:
    """Where prompt lookup found its draft: the last `size` tokens of the context also occur at `start`, and the
    tokens that followed that occurrence (`follow`, `follow + K`) are proposed. Positions index the context."""

    start: int
    size: int
    follow: int


@dataclass
class Check:
    """One verified position: the target's distribution p beside the draft's q, and the decision."""

    index: int  # 0 .. K-1 for a drafted token, K for the bonus position
    draft_id: int | None  # None at the bonus position (nothing was drafted there)
    draft_text: str
    p: float  # the target's probability of the drafted token, after the sampler pipeline
    q: float  # the draft's probability of it (1.0 for prompt lookup: its proposal is certain)
    target_id: int  # the target's argmax here
    target_text: str
    uniform: float | None  # the number drawn for min(1, p/q) (sampling only)
    accepted: bool | None  # None: not reached (an earlier position was rejected) or the bonus position
    top: list[tuple[int, str, float, float]] = field(default_factory=list)  # (id, text, p, q) of the top tokens


@dataclass
class Round:
    """One round: K drafted tokens, one verify pass over K + 1 positions, n accepted, one bonus token."""

    index: int
    source: str
    context_len: int  # tokens in the context before this round (prompt + generated)
    drafted: list[int]
    drafted_text: list[str]
    accepted: int  # n: how many drafted tokens were kept
    bonus_id: int  # the target's own token after the accepted ones (from the residual after a rejection)
    bonus_text: str
    bonus_from: str  # "argmax", "target" (drawn from p) or "residual" (drawn from max(0, p - q), renormalised)
    checks: list[Check]
    residual: list[tuple[int, str, float]] = field(default_factory=list)  # top of the residual at the rejection
    match: Match | None = None
    kept: int = 0  # tokens this round added to the text (accepted + bonus, cut at end of sequence or the limit)
    cache_verified: int = 0  # positions in the target's KV cache right after the verify pass
    cache_cropped: int = 0  # ... after cropping back to the accepted prefix
    draft_ms: float = 0.0
    verify_ms: float = 0.0
    accept_ms: float = 0.0
    draft_passes: int = 0  # forward passes the draft made (0 for prompt lookup)

    @property
    def ms(self) -> float:
        return self.draft_ms + self.verify_ms + self.accept_ms

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class SpecResult:
    """A whole speculative run: the tokens, the rounds, and how it ran."""

    source: str
    draft_tokens: int
    exit_layer: int | None
    prompt_ids: list[int]
    token_ids: list[int] = field(default_factory=list)
    text: str = ""
    stop_reason: str | None = None
    rounds: list[Round] = field(default_factory=list)
    prefill_ms: float = 0.0
    device: str = ""
    model: str = ""
    dtype: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["summary"] = summary(self.rounds)
        return d


def summary(rounds: list[Round]) -> dict:
    """The run's totals: drafted, accepted, target passes, tokens per target pass, acceptance rate."""
    drafted = sum(len(r.drafted) for r in rounds)
    accepted = sum(r.accepted for r in rounds)
    tokens = sum(r.kept for r in rounds)
    return {
        "rounds": len(rounds),
        "drafted": drafted,
        "accepted": accepted,
        "tokens": tokens,
        "target_passes": len(rounds),
        "tokens_per_target_pass": tokens / len(rounds) if rounds else 0.0,
        "acceptance_rate": accepted / drafted if drafted else 0.0,
        "decode_ms": sum(r.ms for r in rounds),
    }


def acceptance_by_position(rounds: list[Round], k: int) -> list[tuple[int, int]]:
    """Per draft position 0..k-1: (accepted there, verified there). A position after a rejection is not verified."""
    out = [[0, 0] for _ in range(k)]
    for r in rounds:
        for c in r.checks:
            if c.draft_id is not None and c.accepted is not None and c.index < k:
                out[c.index][1] += 1
                out[c.index][0] += int(c.accepted)
    return [tuple(x) for x in out]
