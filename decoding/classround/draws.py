"""One histogram of a sampling round: the class's draws from one distribution (a step of the round at one setting).

The distribution is the lab's own: the round's logits at its context through `decoding.pipeline.process`, computed
once for the whole class. Each draw is `select(processed.final, settings, generator)` with the drawing student's own
seeded generator, exactly what a Step of theirs would draw (`pick`, while the caller holds that student alone); the
round's state counts it (decoding/classround/state.py: one atomic change), so each draw is counted once, in the draw it
was drawn from, whoever draws at the same moment, on whichever replica. What the class is shown and picks from counts
only the seats still here: every reader takes `absent`, the students counted out (their draws are kept, and count
again if they come back).
"""

from collections import Counter

import torch

from decoding.classround.chisquare import chi_square
from decoding.classround.records import DrawRecord, Token
from decoding.classround.state import Tally
from decoding.pipeline import SamplerSettings, select

SHOWN = 9  # tokens the histogram names, the most probable first; the rest share one column
TESTED = 512  # tokens whose probability the chi-square test reads one by one; the rest are its tail at once


class Draw:
    def __init__(self, number: int, step: int, settings: SamplerSettings, final: torch.Tensor, texts, state):
        """`final` (V,): the processed logits every draw is drawn from; `texts(ids)` gives each token id's text
        (decoding.prompts.token_texts on the model's tokenizer); `state` (decoding.classround.state) keeps its
        tallies."""
        self.number, self.step, self.settings = number, step, settings
        self.final = final  # (V,): what every draw is drawn from
        probs = torch.softmax(final, dim=-1)  # (V,): the pipeline's probs_after
        p, ids = torch.topk(probs, min(TESTED, probs.numel()))  # (N,), (N,)
        self.probs = [(int(i), float(q)) for i, q in zip(ids, p) if q > 0]
        self.kept = int((probs > 0).sum())
        self._texts, self._state = texts, state
        self.names = dict(zip([i for i, _ in self.probs[:SHOWN]], texts([i for i, _ in self.probs[:SHOWN]])))
        self._chi = (None, None)  # ((draws, absent) it was computed for, the test): every page reads it once

    def pick(self, generator: torch.Generator) -> int:
        """One draw with a student's generator (the caller holds that student alone, not the round): select over the
        whole vocabulary is the slow part of a draw, and the class's draws run side by side."""
        return select(self.final, self.settings, generator)

    def name(self, token: int) -> str:
        if token not in self.names:
            self.names[token] = self._texts([token])[0]
        return self.names[token]

    def tally(self) -> Tally:
        """Every draw counted so far, the absent's too (the state counts each once, whoever draws at once)."""
        return self._state.tally(self.number)

    @property
    def by_student(self) -> dict[str, list[int]]:
        return self.tally().by_student

    def counted(self, absent: frozenset = frozenset(), tally: Tally | None = None) -> Counter:
        """The draws of the seats here, by token (`absent`: students counted out, whose draws do not count)."""
        tally = tally or self.tally()
        gone = [t for s in absent for t in tally.by_student.get(s, ())]
        return tally.counts - Counter(gone) if gone else tally.counts

    def most_drawn(self, absent: frozenset = frozenset(), tally: Tally | None = None) -> int | None:
        """The class's most common draw (ties: the more probable token); None before the first."""
        counts = self.counted(absent, tally)
        if not counts:
            return None
        rank = {token: k for k, (token, _) in enumerate(self.probs)}
        return min(counts, key=lambda t: (-counts[t], rank.get(t, len(rank)), t))

    def chi(self, absent: frozenset = frozenset(), tally: Tally | None = None):
        """The chi-square test of the draws so far."""
        tally = tally or self.tally()
        if self._chi[0] != (tally.total, absent):
            self._chi = ((tally.total, absent), chi_square(self.counted(absent, tally), self.probs, self.kept))
        return self._chi[1]

    def record(self, previous: "Draw | None" = None, absent: frozenset = frozenset()) -> DrawRecord:
        tally = self.tally()
        counts = self.counted(absent, tally)
        total = sum(counts.values())
        shown = tuple((Token(t, self.names[t], p), counts.get(t, 0)) for t, p in self.probs[:SHOWN])
        counted = sum(n for _, n in shown)
        before = None
        if previous is not None and (top := previous.most_drawn(absent)) is not None:
            before = (sum(previous.counted(absent).values()), _knobs(previous.settings), previous.name(top))
        return DrawRecord(
            number=self.number,
            step=self.step,
            settings=_knobs(self.settings),
            total=total,
            shown=shown,
            other=total - counted,
            other_p=max(0.0, 1.0 - sum(p for _, p in self.probs[:SHOWN])),
            kept=self.kept,
            chi=self.chi(absent, tally),
            previous=before,
        )


KNOBS = ("temperature", "top_k", "top_p", "min_p")  # the settings a round's teacher sets


def _knobs(settings: SamplerSettings) -> dict:
    return {name: getattr(settings, name) for name in KNOBS}
