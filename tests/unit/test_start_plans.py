"""The class plans on Start here are data that must stay true to the app: every step opens a tab that exists, picks a
preset that tab has, through a link the app reads; and each plan is about one class long."""

import html
import re
from urllib.parse import parse_qs, urlparse

import pytest

from ui.beams.tab import DEFAULT as BEAM_DEFAULT
from ui.beams.tab import PRESETS as BEAM_PRESETS
from ui.context import AppConfig
from ui.links import preset_in_link, slugs
from ui.start.plans import PLANS
from ui.start.tab import build, tab_of
from ui.step.links import settings_from_link
from ui.tabs import specs

STEPS = [pytest.param(step, id=f"{plan.title}-{k + 1}") for plan in PLANS for k, step in enumerate(plan.steps)]


def test_start_here_is_the_first_tab():
    assert specs()[0].id == "start"


def test_there_are_three_to_five_plans_of_about_50_minutes():
    assert 3 <= len(PLANS) <= 5
    assert all(40 <= plan.minutes <= 60 for plan in PLANS), [(plan.title, plan.minutes) for plan in PLANS]


@pytest.mark.parametrize("step", STEPS)
def test_every_step_opens_a_tab_of_the_app_with_one_of_its_presets(step):
    assert step.tab in [spec.id for spec in specs()] and step.tab != "start"  # by its id, not an old one
    if step.preset:
        assert step.preset in slugs(tab_of(step).presets), f"{step.tab} has no preset {step.preset!r}"


@pytest.mark.parametrize("step", STEPS)
def test_every_steps_link_parses_to_its_tab_and_preset_with_nothing_wrong(step):
    query = {key: values[0] for key, values in parse_qs(urlparse(step.link).query).items()}
    assert query["tab"] == step.tab and query.get("preset", "") == step.preset
    presets = tab_of(step).presets
    if step.tab == "step":
        name, _, problems = settings_from_link(query)
        assert problems == [] and name == slugs(presets)[step.preset]
    elif step.preset:
        assert preset_in_link(query, step.tab, presets) == (slugs(presets)[step.preset], "")


@pytest.mark.parametrize("step", STEPS)
def test_every_step_says_one_line_to_do_and_one_sentence_to_notice_that_a_browser_can_check(step):
    assert step.do and "\n" not in step.do
    assert step.notice.endswith(".") and step.notice.count(". ") == 0, step.notice
    assert step.shows.startswith("#") and re.compile(step.pattern)
    assert all(press.startswith("#") for press in step.presses)


def test_the_tab_draws_every_step_as_a_plain_link_named_by_its_tabs_title():
    import gradio as gr

    with gr.Blocks() as demo:
        build(AppConfig(device="cpu"))
    plans = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "start-plans").value
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', plans)
    steps = [step for plan in PLANS for step in plan.steps]
    # straight to the lesson's page, with the query a link sent before carries
    assert [href for href, _ in links] == [f"./{step.tab}{step.link}".replace("&", "&amp;") for step in steps]
    titles = {spec.id: spec.title for spec in specs()}  # the titles in the navigation (one page per spec)
    assert [html.unescape(words).split(" · ")[0] for _, words in links] == [titles[step.tab] for step in steps]


def test_the_timing_steps_patterns_match_the_sentence_the_tab_writes_for_a_measurement():
    """The Prefill vs decode steps read the sentence under the roofline: their patterns match what visuals writes
    for a hand-made measurement of the same shape (batch sizes 1 to 64), so a reworded sentence fails here, in a
    second, rather than after a ten-minute wait in the browser."""
    from decoding.timing.limits import Sample
    from tests.helpers.made import FULL, measured
    from visuals.timing.captions import captions

    roofline, *_ = captions(measured(**dict(FULL, batch=[Sample(1, [20.0]), Sample(64, [80.0])])))
    timing = [step for plan in PLANS for step in plan.steps if step.shows == "#timing-roofline-note"]
    assert timing and all(re.search(step.pattern, roofline) for step in timing), roofline


def test_a_step_that_asks_the_class_to_guess_hides_its_answer_until_the_action_or_a_show():
    guesses = [step for plan in PLANS for step in plan.steps if step.do.startswith("Guess")]
    assert guesses and all(step.guess for step in guesses)
    for step in guesses:
        # no action on the page brings the numbers: the link covers them until the teacher presses them
        assert ("guess=1" in step.link) == (not step.presses), step.link
    # the beam preset's note, shown before Run, gives the class no number to copy
    assert not re.search(r"\d", BEAM_PRESETS[BEAM_DEFAULT].note), BEAM_PRESETS[BEAM_DEFAULT].note
