"""The headline over the repetition section: where it ran, how much, the seeds, and a cancelled run said plainly."""

from types import SimpleNamespace

from visuals.beams.repetition_captions import headline


def experiment(seeds=(0,), cancelled=False):
    runs = {"greedy": [object()], "temperature 1.0": [object()] * len(seeds)}
    return SimpleNamespace(runs=runs, max_new_tokens=150, seconds=61.2, seeds=list(seeds), cancelled=cancelled)


def test_headline_counts_generations_and_names_the_device():
    text = headline(experiment(), "tiny, cpu")
    assert text == "Measured on **tiny, cpu**: 2 generations of up to 150 tokens in 61 s (seed 0)."


def test_headline_gives_the_seed_range_of_the_sampled_settings():
    text = headline(experiment(seeds=(3, 4, 5)), "tiny, cpu")
    assert "4 generations" in text and "(seed 3 to 5 for the sampled settings)" in text


def test_a_cancelled_run_says_every_settings_tokens_so_far_are_shown():
    assert headline(experiment(cancelled=True), "tiny, cpu").endswith(
        " **Cancelled**: every setting's tokens so far are shown (the same number for each)."
    )
