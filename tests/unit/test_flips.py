"""The flip rule: a greedy token can flip only where the noise can bridge the top-1/top-2 gap."""

from decoding.nondeterminism.flips import flip_possible


def test_a_gap_wider_than_twice_the_noise_cannot_flip():
    assert not flip_possible(1.0, 0.125)


def test_a_gap_narrower_than_twice_the_noise_can_flip():
    assert flip_possible(0.2, 0.125)


def test_noise_exactly_half_the_gap_can_bridge_it():
    # top-1 down by 0.125 and top-2 up by 0.125 meet at a tie: the boundary counts
    assert flip_possible(0.25, 0.125)


def test_an_exact_tie_flips_with_any_noise_even_zero():
    assert flip_possible(0.0, 0.0) and not flip_possible(1e-9, 0.0)


def test_no_noise_to_speak_of_after_the_divergence_means_no_flip():
    assert not flip_possible(0.0, None)
