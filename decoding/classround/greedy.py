"""Greedy together: every student runs greedy (temperature 0, the argmax) on the round's context, each their own run
whose passes ride the shared scheduler's ticks with the rest of the class's, and the projector says whether every
token agreed.

Greedy has no randomness, so the same context gives the same text, except for one thing: a pass shared with other
sessions computes each logit in another order of float additions than a pass alone, and may differ from it in the
last digits (the server's batching noise). Where the top two tokens are closer than that, two students can be given
different argmaxes: the first step where the class's tokens were not all the same is the `Split`. After it their
contexts differ, so later tokens may differ for that reason alone: only the first split is read.

A student's steps hold their own seat's lock, not the round's, so the class's steps wait on the scheduler together
and are packed into its passes. Each student's run (its KV cache) is on the replica that serves their page; in a
lecture hall the projector still compares the whole class's tokens, which the round's state keeps.
"""

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from decoding.classround.records import GreedyRecord, Split, Token
from decoding.loop import Run
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings
from decoding.prompts import Prompt

GREEDY = SamplerSettings(temperature=0.0)
LENGTH = 16  # greedy tokens each student writes


@dataclass
class GreedySeat:
    """One student's greedy run on this replica (what each of its steps was chosen from is in the round's state)."""

    run: Run | None = None  # made at the student's first step
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class GreedyTogether:
    """The class's greedy runs from one context (a new `start` when the round's context or kind changes). The runs are
    this replica's (each its KV cache); each step's token, and the pass it came from, go to the round's `state`, so
    the projector compares the whole class's."""

    def __init__(self, lm: LoadedModel, prompt: Prompt, length: int, scheduler, state, start: int, clock):
        self.lm, self.prompt, self.length, self.scheduler = lm, prompt, length, scheduler
        self.state, self.start, self.clock = state, start, clock
        self.seats: dict[str, GreedySeat] = {}

    def seat(self, student: str) -> GreedySeat:
        """The student's seat here (the caller holds the round's lock)."""
        return self.seats.setdefault(student, GreedySeat())

    def step(self, seat: GreedySeat, student: str, n: int = 1) -> int:
        """Up to `n` greedy steps of the seat's run (its prompt's pass first, at its first step on this replica),
        through the scheduler when the server has one. Called without the round's lock. Returns the steps taken."""
        with seat.lock:
            if seat.run is None:
                run = Run(self.lm, self.prompt, max_new_tokens=self.length, scheduler=self.scheduler, top_n=1)
                run.prefill()
                # a student moved here from a replica that went away: their tokens so far, read again
                for token, _, _ in self.state.greedy_steps(self.start).get(student, []):
                    if not run.done:
                        run.step(GREEDY, force_id=token)
                seat.run = run
            taken = 0
            while taken < n and not seat.run.done:
                step = seat.run.step(GREEDY)
                self.state.greedy_step(self.start, student, (step.token_id, step.rows, step.pass_mode), self.clock())
                taken += 1
            return taken

    def runs(self) -> int:
        """Students whose run exists on this replica (each holds a KV cache)."""
        return sum(seat.run is not None for seat in self.seats.values())

    def sequences(self, absent: frozenset = frozenset()) -> dict[str, tuple[int, ...]]:
        """Each student's greedy tokens so far, but those counted out (`absent`)."""
        steps = self.state.greedy_steps(self.start)
        return {student: tuple(s[0] for s in seq) for student, seq in steps.items() if student not in absent and seq}

    def record(self, texts, noise: float | None, absent: frozenset = frozenset()) -> GreedyRecord:
        """What the projector shows of the students here; `texts(ids)` gives each token id's text."""
        every = self.state.greedy_steps(self.start)
        sequences = {s: tuple(t for t, _, _ in seq) for s, seq in every.items() if s not in absent and seq}
        steps = [s for student, seq in every.items() if student not in absent for s in seq]
        ids = sorted({t for seq in sequences.values() for t in seq})
        names = dict(zip(ids, texts(ids))) if ids else {}
        found, compared = first_split(sequences)
        split = None
        if found is not None:
            k, majority, others = found
            tokens = {t: Token(t, names[t], 0.0) for t in {majority, *others.values()}}
            split = Split(k, tokens[majority], tuple((s, tokens[t]) for s, t in sorted(others.items())))
        return GreedyRecord(
            length=self.length,
            students=tuple(sorted(sequences.items())),
            texts=names,
            split=split,
            compared=compared,
            passes=len(steps),
            shared=sum(mode == "packed" for _, _, mode in steps),
            most_rows=max((rows for _, rows, _ in steps), default=0),
            noise=noise,
            across_servers=self.state.shared,
        )


def first_split(sequences: Mapping[str, Sequence[int]]) -> tuple[tuple[int, int, dict] | None, int]:
    """The first step at which the students who reached it did not all write the same token: (step, the majority's
    token, {student: their other token}), or None; and how many steps were compared (reached by two students or
    more) up to it."""
    compared = 0
    for k in range(max((len(s) for s in sequences.values()), default=0)):
        at = {student: seq[k] for student, seq in sequences.items() if len(seq) > k}
        if len(at) < 2:
            break
        compared += 1
        counts = Counter(at.values())
        if len(counts) > 1:
            majority = min(counts, key=lambda t: (-counts[t], t))
            return (k, majority, {s: t for s, t in at.items() if t != majority}), compared
    return None, compared
