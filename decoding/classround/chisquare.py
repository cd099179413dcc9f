"""Do the class's draws come from the probabilities they were drawn from? Pearson's chi-square test.

Each token that expects at least 5 draws (n x p >= 5) is a bin of its own; every other token is merged into one tail
bin, since the test's chi-square law holds only where every bin expects about 5 or more. A tail that itself expects
fewer than 5 is merged into the smallest bin. The statistic sums (observed - expected)^2 / expected over the bins,
and with k bins it follows a chi-square law of k - 1 degrees of freedom when the draws are right: the p-value is the
chance of a statistic at least this large, `records.LEVEL` the level below which the draws are said not to fit.
"""

from collections.abc import Mapping, Sequence

import torch

from decoding.classround.records import ChiSquare

MIN_EXPECTED = 5.0


def chi_square(
    counts: Mapping[int, int], probs: Sequence[tuple[int, float]], kept: int | None = None
) -> ChiSquare | None:
    """The test of `counts` (token id -> draws) against `probs` ((token id, probability) for the most probable
    tokens, in any order; the probability not listed is the tail's), `kept` the tokens with a probability above 0 (by
    default those listed). None with no draws, or fewer than two bins."""
    n = sum(counts.values())
    if n == 0:
        return None
    ordered = sorted(probs, key=lambda tp: -tp[1])
    binned = [(token, p) for token, p in ordered if n * p >= MIN_EXPECTED]
    observed = [float(counts.get(token, 0)) for token, _ in binned]
    expected = [n * p for _, p in binned]
    tail_observed, tail_expected = n - sum(observed), max(0.0, n - sum(expected))
    tail = (len(ordered) if kept is None else kept) - len(binned)
    if tail_expected >= MIN_EXPECTED:
        observed.append(tail_observed)
        expected.append(tail_expected)
    elif binned:  # too small to stand alone: it joins the least probable bin
        observed[-1] += tail_observed
        expected[-1] += tail_expected
    if len(observed) < 2:
        return None
    statistic = sum((o - e) ** 2 / e for o, e in zip(observed, expected))
    dof = len(observed) - 1
    return ChiSquare(statistic, dof, survival(statistic, dof), len(observed), tail)


def survival(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X chi-square with `dof` degrees of freedom: the regularised upper incomplete gamma
    function Q(dof / 2, statistic / 2)."""
    if dof < 1:
        raise ValueError(f"a chi-square law needs at least 1 degree of freedom, got {dof}")
    half = torch.tensor(dof / 2, dtype=torch.float64)
    return float(torch.special.gammaincc(half, torch.tensor(max(statistic, 0.0) / 2, dtype=torch.float64)))
