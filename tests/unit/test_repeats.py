"""Repetition metrics on hand-made token sequences: repeated n-grams, loops, reuse, word counts."""

import pytest

from decoding.beams import repeats as rep

A, B, C, D, E, F = 1, 2, 3, 4, 5, 6


def test_no_repeats_share_is_zero():
    assert rep.repeated_ngram_share([A, B, C, D, E, F], 3) == 0.0


def test_share_counts_ngram_positions_seen_before():
    # 3-grams: ABC BCA CAB ABC BCD -> the 4th (ABC) was seen before: 1 of 5
    assert rep.repeated_ngram_share([A, B, C, A, B, C, D], 3) == pytest.approx(1 / 5)
    # 4-grams: ABCA BCAB CABC ABCD -> all distinct
    assert rep.repeated_ngram_share([A, B, C, A, B, C, D], 4) == 0.0


def test_share_equals_one_minus_distinct_over_total():
    ids = [A, B, A, B, A, B, C, A, B, A]
    grams = rep.ngrams(ids, 3)
    assert rep.repeated_ngram_share(ids, 3) == pytest.approx(1 - len(set(grams)) / len(grams))


def test_all_repeats_share_approaches_one():
    # one token 20 times: 18 trigrams, all the same, so 17 of 18 were seen before
    assert rep.repeated_ngram_share([A] * 20, 3) == pytest.approx(17 / 18)


def test_too_short_for_an_ngram_has_share_zero():
    assert rep.repeated_ngram_share([A, B], 3) == 0.0
    assert rep.repeated_ngram_share([], 4) == 0.0


def test_ngram_size_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="n-gram size"):
        rep.repeated_ngram_share([A, B, C], 0)


def test_loop_start_is_where_a_span_repeats_back_to_back():
    #        0  1  2  3  4  5  6  7  8  9
    ids = [D, E, A, B, C, A, B, C, A, B]
    loop = rep.find_loop(ids, 3)
    assert (loop.start, loop.period, loop.end) == (2, 3, 10)


def test_loop_needs_a_span_of_at_least_n_tokens():
    # "A B A B" repeats a 2-token span: a loop for n=2, not for n=3
    assert rep.find_loop([A, B, A, B, C], 3) is None
    assert rep.find_loop([A, B, A, B, C], 2) == rep.RepeatLoop(0, 2, 4)


def test_repeat_that_is_not_back_to_back_is_no_loop():
    assert rep.find_loop([A, B, C, D, A, B, C], 3) is None


def test_single_token_run_is_a_loop_of_period_n():
    assert rep.find_loop([E, A, A, A, A, A, A, A], 3) == rep.RepeatLoop(1, 3, 8)


def test_no_loop_without_repeats():
    assert rep.find_loop([A, B, C, D, E, F], 3) is None


def test_repeated_mask_marks_every_token_of_a_seen_ngram():
    ids = [A, B, C, D, A, B, C, E]
    assert rep.repeated_mask(ids, 3) == [False, False, False, False, True, True, True, False]
    assert rep.spans(rep.repeated_mask(ids, 3)) == [(4, 7)]


def test_spans_of_a_mask():
    assert rep.spans([True, False, True, True]) == [(0, 1), (2, 4)]
    assert rep.spans([]) == []


def test_reuse_share_counts_tokens_seen_in_context_or_earlier():
    assert rep.reuse_share([A, B, A, C], context=[C]) == pytest.approx(2 / 4)
    assert rep.reuse_share([]) == 0.0


def test_word_counts_match_whole_words():
    assert rep.word_counts("Mia met Max. Mia's dog Maxi", ["Mia", "Max"]) == {"Mia": 2, "Max": 1}
