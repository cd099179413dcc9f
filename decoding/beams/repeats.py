"""Repetition, measured on token ids: how much of a sequence repeats itself, and where it starts to loop.

- repeated n-gram share: of the n-gram positions in a sequence, the share whose n-gram already occurred
  at an earlier position (overlaps count). This is the same number as 1 - distinct n-grams / total n-grams.
- loop: the first position i where a span of L >= n tokens is followed at once by itself
  (ids[i:i+L] == ids[i+L:i+2L], as in "A B C A B C"); the loop runs on while the sequence keeps period L.
- reuse: the share of tokens that already occurred, which names and list markers need.
Pure python on lists of ids; the repetition experiment (`decoding.beams.repetition`) reads its runs with them.
"""

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class RepeatLoop:
    """A back-to-back repeat: from `start` the sequence repeats with `period` tokens until `end` (exclusive)."""

    start: int
    period: int
    end: int


def _check_n(n: int) -> None:
    if not (isinstance(n, int) and not isinstance(n, bool) and n >= 1):
        raise ValueError(f"n-gram size must be an integer >= 1, got {n!r}")


def ngrams(ids: list[int], n: int) -> list[tuple[int, ...]]:
    _check_n(n)
    return [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]


def repeated_ngram_share(ids: list[int], n: int) -> float:
    """Share of n-gram positions whose n-gram appeared at an earlier position (0 when there are no n-grams)."""
    grams = ngrams(ids, n)
    return 1 - len(set(grams)) / len(grams) if grams else 0.0


def repeated_mask(ids: list[int], n: int) -> list[bool]:
    """For each token: does it lie inside an n-gram that already occurred earlier? (what to highlight)"""
    seen, mask = set(), [False] * len(ids)
    for i, gram in enumerate(ngrams(ids, n)):
        if gram in seen:
            mask[i : i + n] = [True] * n
        seen.add(gram)
    return mask


def spans(mask: list[bool]) -> list[tuple[int, int]]:
    """The runs of True in `mask` as (start, end) pairs, end exclusive."""
    out, start = [], None
    for i, on in enumerate([*mask, False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            out.append((start, i))
            start = None
    return out


def find_loop(ids: list[int], n: int) -> RepeatLoop | None:
    """The earliest back-to-back repeat of a span of at least n tokens (shortest such span), or None."""
    _check_n(n)
    size = len(ids)
    for i in range(size):
        for period in range(n, (size - i) // 2 + 1):
            if ids[i : i + period] == ids[i + period : i + 2 * period]:
                end = i + 2 * period
                while end < size and ids[end] == ids[end - period]:
                    end += 1
                return RepeatLoop(i, period, end)
    return None


def reuse_share(ids: list[int], context: list[int] = ()) -> float:
    """Share of tokens in `ids` that already occurred before them (in `context` or earlier in `ids`).
    Names, code identifiers and list markers need reuse; a large repetition penalty drives this down."""
    seen, reused = set(context), 0
    for token in ids:
        reused += token in seen
        seen.add(token)
    return reused / len(ids) if ids else 0.0


def word_counts(text: str, words: list[str]) -> dict[str, int]:
    """How often each word occurs in the text (whole words, case-sensitive): does a name keep being used?"""
    return {w: len(re.findall(rf"(?<!\w){re.escape(w)}(?!\w)", text)) for w in words}
