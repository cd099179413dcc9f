"""A shared link opens its setup: the preset by its short name, then each setting it carries; a bad value is left
out and named in the words of the page, never a blank or a crash."""

from ui.step.lessons import DEFAULT_PRESET, PRESETS, SLUGS
from ui.step.links import settings_from_link


def test_a_link_sets_the_preset_then_its_own_settings_over_it():
    name, values, problems = settings_from_link({"preset": "greedy-loop", "temperature": "0.7", "top_k": "40"})
    assert name == SLUGS["greedy-loop"] and problems == []
    assert values["temperature"] == 0.7 and values["top_k"] == 40
    assert values["repetition_penalty"] == PRESETS[name].repetition  # not in the link: the preset's own value


def test_no_link_opens_the_default_preset():
    name, values, problems = settings_from_link({})
    assert name == DEFAULT_PRESET and values["temperature"] == PRESETS[DEFAULT_PRESET].temperature and not problems


def test_a_bad_value_in_a_link_is_left_out_and_named_with_its_range():
    name, values, problems = settings_from_link({"preset": "nope", "top_p": "5", "seed": "-1"})
    assert name == DEFAULT_PRESET and values["top_p"] == PRESETS[DEFAULT_PRESET].top_p
    text = " ".join(problems)
    assert "'nope'" in text and "confident" in text
    assert "Top-p must be between 0.01 and 1 (1 = off), got '5'" in text and "Seed" in text
