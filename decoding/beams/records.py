"""What a beam search leaves behind, as plain data: every step's pool of candidates with their fates,
the finished hypotheses, and the result. `decoding.beams.search` builds them; `visuals.beams.search` draws them."""

from dataclasses import asdict, dataclass, field


@dataclass
class BeamCandidate:
    parent: int  # slot of the live beam it extends
    token_id: int
    token_text: str
    logprob: float  # of this token after its beam
    score: float  # cumulative log-prob of the beam plus this token
    rank: int  # place in the pool of 2*k ranked candidates (0 = best); -1 = outside the pool
    fate: str  # "running" (a live beam next step), "finished" (a hypothesis), or "pruned"
    next_slot: int = -1  # its slot among next step's live beams, when running


@dataclass
class Hypothesis:
    token_ids: list[int]  # generated ids, the end-of-sequence token included
    logprob: float  # summed log-probability
    score: float  # logprob / len(token_ids) ** length_penalty
    step: int  # the step it finished at


@dataclass
class BeamStep:
    index: int
    beams: list[tuple[list[int], float]]  # the live beams this step expanded: (generated ids, cumulative log-prob)
    candidates: list[BeamCandidate]
    finished: list[Hypothesis]  # the finished set after this step, best first
    last: bool = False  # the search stops after this step


@dataclass
class BeamResult:
    prompt_ids: list[int]
    num_beams: int
    length_penalty: float
    early_stopping: bool | str
    max_new_tokens: int
    steps: list[BeamStep] = field(default_factory=list)
    best: Hypothesis | None = None
    text: str = ""
    stop_reason: str = ""  # max_new_tokens, all_finished (early_stopping=True), cannot_improve, no_continuation

    @property
    def token_ids(self) -> list[int]:
        return list(self.best.token_ids) if self.best else []

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(token_ids=self.token_ids, score=self.best.score if self.best else None)
        d["logprob"] = self.best.logprob if self.best else None
        return d
