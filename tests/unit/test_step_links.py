"""A shared link opens its setup: the preset by its short name, then each setting it carries; a bad value is left
out and named in the words of the page, never a blank or a crash."""

import json
from types import SimpleNamespace

import gradio as gr
import pytest

from decoding.stages import MIN_P, REPETITION
from ui.context import AppConfig
from ui.opened import NOT_A_LINK, FirstOpen, script
from ui.step.controls import opens_more
from ui.step.lessons import DEFAULT_PRESET, PRESETS, SLUGS
from ui.step.links import open_link, settings_from_link
from ui.step.page import layout
from ui.step.tab import setup_outputs


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


@pytest.mark.bundled
def test_a_page_with_no_link_starts_with_what_the_links_setup_sets_for_it():
    """The setup runs only on a link's page (ui/opened.py, link_only): a page with no link must be built with every
    value that setup would set, or it would show something else until a link was opened."""
    config = AppConfig()
    opened = open_link(config, None)
    with gr.Blocks():
        c = layout(config, opened)
    # "More settings" is built closed, and a page with no link leaves it so
    built = [component.open if component is c.more else component.value for component in setup_outputs(c)]
    assert opened.reads.text and opened.reads.chips  # what the model reads, for the default prompt, from the start
    for component, was, now in zip(setup_outputs(c), built, opened.values()):
        if component is c.more:
            assert was is False and now == gr.skip(), now
            continue
        assert was == now or (was in (None, "") and now == ""), component.elem_id


def test_the_step_tabs_setup_runs_only_for_a_link():
    first = FirstOpen("step")
    with gr.Blocks():
        first.click(lambda: None, None, None, link_only=True)
    assert first.link_only
    js = script(first)
    assert '"step-opened"' in js and "if (true && !link) return;" in js and json.dumps(list(NOT_A_LINK)) in js
    assert script(FirstOpen("timing")) is None  # a lesson without a setup presses nothing


def test_a_link_that_sets_a_knob_in_more_settings_opens_it_and_a_plain_one_leaves_it_closed():
    assert opens_more(MIN_P.neutral, REPETITION.neutral) == gr.skip()
    assert opens_more(0.1, REPETITION.neutral).open is True and opens_more(MIN_P.neutral, 1.3).open is True
    config = AppConfig()
    for query, opened in (({"preset": "confident"}, False), ({"min_p": "0.1"}, True), ({"seed": "7"}, True)):
        more = open_link(config, SimpleNamespace(query_params=query)).setup.more
        assert (more != gr.skip() and more.open is True) == opened, query
