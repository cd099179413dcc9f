"""One step's guesses: each student's pick for the next token, hidden from the class until the teacher reveals them
beside the model's own probabilities (the softmax of its logits: what it believes, before any sampler setting).

The round's state keeps them (decoding/classround/state.py), one guess per student (a new one replaces theirs, in one
atomic change that a reveal closes); the class's counts and its pick read only the students still here (`absent`:
those counted out, whose guesses are kept aside).
"""

from collections import Counter

import torch

from decoding.classround.records import GuessRecord, Token
from decoding.prompts import token_texts
from decoding.values import short

CHOICES = 10  # the model's most probable tokens a student picks among (or they type their own)
GUESS_CHARS = 100  # a typed guess: one token, or a short word (the model's longest tokens are far shorter)
QUOTED = 40  # characters of a typed guess a message quotes
PIECES = 8  # pieces of a typed guess a message lists


class Guesses:
    def __init__(self, model_probs: torch.Tensor, texts, state, step: int):
        """`model_probs` (V,): the model's own probabilities at step `step`; `texts(ids)` each token id's text;
        `state` (decoding.classround.state) keeps the guesses."""
        self.probs, self.step = model_probs, step
        p, ids = torch.topk(model_probs, min(CHOICES, model_probs.numel()))  # (10,), (10,)
        top = [int(i) for i in ids]
        self.names = dict(zip(top, texts(top)))
        self.top = [Token(i, self.names[i], float(q)) for i, q in zip(top, p)]
        self._texts, self._state = texts, state

    def guess(self, student: str, token: int, revealed: bool, now: float) -> Token:
        """`student`'s guess (a new one replaces theirs), until the teacher reveals the step's guesses."""
        if not revealed and not 0 <= token < self.probs.numel():
            raise ValueError(f"a guessed token id must be in [0, {self.probs.numel()}), got {token}")
        # the state refuses it too when the reveal came after this page read the round
        if revealed or not self._state.guess(self.step, student, token, now):
            raise ValueError("the teacher has revealed this step's guesses: wait for the next step to guess again")
        return self.token(token)

    def by_student(self) -> dict[str, int]:
        return self._state.guesses(self.step)

    def token(self, token: int) -> Token:
        if token not in self.names:
            self.names[token] = self._texts([token])[0]
        return Token(token, self.names[token], float(self.probs[token]))

    def counted(self, absent: frozenset = frozenset()) -> Counter:
        """The guesses of the students here, by token."""
        return Counter(t for s, t in self.by_student().items() if s not in absent)

    def most_guessed(self, absent: frozenset = frozenset()) -> int | None:
        """The class's most common guess (ties: the more probable token); None before the first."""
        counts = self.counted(absent)
        if not counts:
            return None
        return min(counts, key=lambda t: (-counts[t], -float(self.probs[t]), t))

    def choices(self) -> tuple[Token, ...]:
        """The model's top ten in alphabetical order, without their probabilities: what a student picks among."""
        return tuple(sorted((Token(t.id, t.text, 0.0) for t in self.top), key=lambda t: (t.text.strip().lower(), t.id)))

    def record(self, absent: frozenset = frozenset(), revealed: bool = False) -> GuessRecord:
        counts = self.counted(absent)
        top1 = self.top[0]
        shown = ()
        if revealed:
            tokens = [t.id for t in self.top] + sorted(set(counts) - {t.id for t in self.top})
            shown = tuple(sorted(((self.token(t), counts.get(t, 0)) for t in tokens), key=lambda tc: -tc[0].p))
        return GuessRecord(revealed, sum(counts.values()), top1, counts.get(top1.id, 0), shown)


def typed_token(tokenizer, text) -> int:
    """A typed guess as one token of the model's: the word with a space before it first (␣Paris, as a word after a
    space is written), then as typed; a ValueError that says how the model splits it when neither is one token."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("type the token you expect next (a word, or a piece of one), or pick one of the ten")
    if len(text) > GUESS_CHARS:
        raise ValueError(f"a guess is at most {GUESS_CHARS} characters (one token); got {short(text, QUOTED)}")
    tries = [" " + text.strip(), text] if not text.startswith(" ") else [text]
    for attempt in tries:
        ids = tokenizer(attempt, add_special_tokens=False).input_ids
        if len(ids) == 1:
            return ids[0]
    ids = tokenizer(tries[0], add_special_tokens=False).input_ids
    pieces = " · ".join(repr(t) for t in token_texts(tokenizer, ids[:PIECES])) + (" · …" if len(ids) > PIECES else "")
    raise ValueError(
        f"{short(text.strip(), QUOTED)} is {len(ids)} tokens to this model ({pieces}): type one token "
        "(its first piece), or pick one of the ten"
    )
