"""The class plans on Start here are data that must stay true to the app: every step opens a tab that exists, picks a
preset that tab has, through a link the app reads; and each plan is about one class long."""

import re
from urllib.parse import parse_qs, urlparse

import pytest

from ui.links import preset_in_link, slugs
from ui.start.plans import PLANS
from ui.start.tab import PRESETS, TITLES, build
from ui.step.links import settings_from_link

STEPS = [pytest.param(step, id=f"{plan.title}-{k + 1}") for plan in PLANS for k, step in enumerate(plan.steps)]


def app_tabs() -> dict[str, str]:
    """{link id: title} of app.TABS, in the tab row's order."""
    from app import TABS

    return {tab_id: title for title, _, tab_id in TABS}


def test_start_here_is_the_first_tab_and_its_titles_are_the_apps():
    tabs = app_tabs()
    assert next(iter(tabs)) == "start"
    assert {tab_id: title for tab_id, title in tabs.items() if tab_id != "start"} == TITLES


def test_there_are_three_or_four_plans_of_about_50_minutes():
    assert 3 <= len(PLANS) <= 4
    assert all(40 <= plan.minutes <= 60 for plan in PLANS), [(plan.title, plan.minutes) for plan in PLANS]


@pytest.mark.parametrize("step", STEPS)
def test_every_step_opens_a_tab_of_the_app_with_one_of_its_presets(step):
    assert step.tab in app_tabs() and step.tab != "start"
    if step.preset:
        assert step.preset in slugs(PRESETS[step.tab]), f"{step.tab} has no preset {step.preset!r}"


@pytest.mark.parametrize("step", STEPS)
def test_every_steps_link_parses_to_its_tab_and_preset_with_nothing_wrong(step):
    query = {key: values[0] for key, values in parse_qs(urlparse(step.link).query).items()}
    assert query["tab"] == step.tab and query.get("preset", "") == step.preset
    if step.tab == "step":
        name, _, problems = settings_from_link(query)
        assert problems == [] and name == slugs(PRESETS["step"])[step.preset]
    elif step.preset:
        assert preset_in_link(query, step.tab, PRESETS[step.tab]) == (slugs(PRESETS[step.tab])[step.preset], "")


@pytest.mark.parametrize("step", STEPS)
def test_every_step_says_one_line_to_do_and_one_sentence_to_notice_that_a_browser_can_check(step):
    assert step.do and "\n" not in step.do
    assert step.notice.endswith(".") and step.notice.count(". ") == 0, step.notice
    assert step.shows.startswith("#") and re.compile(step.pattern)
    assert all(press.startswith("#") for press in step.presses)


def test_the_tab_draws_every_step_as_a_plain_link():
    import gradio as gr

    with gr.Blocks() as demo:
        build(None)
    plans = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "start-plans").value
    hrefs = re.findall(r'<a href="([^"]+)"', plans)
    assert hrefs == [step.link.replace("&", "&amp;") for plan in PLANS for step in plan.steps]


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
