"""The chi-square test of a round's draws: bins are the tokens that expect 5 draws or more, the rest merged into one
tail; seeded draws from the round's own distribution pass it at the 1% level, draws from another distribution fail."""

import pytest

from decoding.classround.chisquare import chi_square, survival
from decoding.classround.records import LEVEL
from decoding.classround.round import Round
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt


def test_the_p_value_is_the_chi_square_laws_upper_tail():
    # the textbook's critical values: 3.84 (1 dof) and 11.07 (5 dof) at 5%, 6.63 (1 dof) at 1%
    assert survival(3.841, 1) == pytest.approx(0.05, abs=2e-4)
    assert survival(11.070, 5) == pytest.approx(0.05, abs=2e-4)
    assert survival(6.635, 1) == pytest.approx(0.01, abs=1e-4)
    assert survival(0.0, 3) == 1.0
    with pytest.raises(ValueError, match="at least 1 degree of freedom, got 0"):
        survival(1.0, 0)


def test_counts_equal_to_what_their_probabilities_expect_score_zero():
    chi = chi_square({1: 50, 2: 30, 3: 20}, [(1, 0.5), (2, 0.3), (3, 0.2)])
    assert chi.statistic == pytest.approx(0.0) and chi.p_value == pytest.approx(1.0)
    assert (chi.bins, chi.dof, chi.fits) == (3, 2, True)


def test_a_hand_worked_table():
    # 100 draws over p = .5, .3, .2: observed 60, 25, 15 -> (10²/50 + 5²/30 + 5²/20) = 2 + 0.833 + 1.25 = 4.083
    chi = chi_square({1: 60, 2: 25, 3: 15}, [(1, 0.5), (2, 0.3), (3, 0.2)])
    assert chi.statistic == pytest.approx(4.0833, abs=1e-3) and chi.dof == 2
    assert chi.p_value == pytest.approx(0.1298, abs=1e-3)


def test_tokens_that_expect_fewer_than_five_draws_are_merged_into_one_tail_bin():
    # 100 draws: p = .6 and .3 are bins; the ten tokens of p = .01 (1 draw each expected) share one bin of 10
    probs = [(1, 0.6), (2, 0.3)] + [(10 + k, 0.01) for k in range(10)]
    chi = chi_square({1: 60, 2: 30, 10: 4, 11: 6}, probs)
    assert (chi.bins, chi.tail) == (3, 10)
    assert chi.statistic == pytest.approx(0.0)


def test_a_tail_that_expects_fewer_than_five_joins_the_least_probable_bin():
    # 100 draws: .5, .3, .18 are bins; the tail (.02, 2 expected) joins the .18 bin (18 + 2 = 20 expected)
    chi = chi_square({1: 50, 2: 30, 3: 20}, [(1, 0.5), (2, 0.3), (3, 0.18), (4, 0.02)])
    assert (chi.bins, chi.tail) == (3, 1) and chi.statistic == pytest.approx(0.0)


def test_fewer_than_two_bins_or_no_draws_have_no_test():
    assert chi_square({}, [(1, 0.5), (2, 0.5)]) is None
    assert chi_square({1: 3}, [(1, 0.5), (2, 0.5)]) is None  # 3 draws: no token expects 5
    assert chi_square({1: 50}, [(1, 1.0)]) is None  # one token holds everything


def rounded(lm, settings) -> Round:
    prompt = encode_prompt(lm.tokenizer, "hello there", chat=False)
    return Round(lm, prompt, settings, "sample", code="K7QF", key="k").open()


@pytest.mark.parametrize("settings", [SamplerSettings(top_k=8), SamplerSettings(temperature=0.7, top_p=0.9)])
def test_seeded_draws_from_the_rounds_own_distribution_pass_at_the_one_percent_level(tiny, settings):
    r = rounded(tiny, settings)
    for k in range(20):
        r.join(f"s{k}", 1000 + k)
    r.draw_each("k", 250)  # 21 seats (the projector's too) x 250 = 5,250 draws, each seat its own seed
    chi = r.record().draw.chi
    assert chi is not None and chi.bins >= 5
    assert chi.p_value >= LEVEL, chi


def test_draws_from_another_temperature_fail_against_these_probabilities(tiny):
    hot, cool = rounded(tiny, SamplerSettings(top_k=8, temperature=1.5)), rounded(tiny, SamplerSettings(top_k=8))
    hot.join("ada", 7)
    hot.draw_each("k", 1000)  # 2 seats (the projector too) x 1,000
    counts = {int(t): n for t, n in hot.numbers("k")["draw"]["counts"].items()}
    chi = chi_square(counts, cool.draw.probs)
    assert chi.p_value < LEVEL, chi  # the test can tell: 2,000 draws at 1.5 are not draws at 1
