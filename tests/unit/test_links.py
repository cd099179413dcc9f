"""A preset in a shared link: one naming rule for every tab, the step tab's old link names unchanged, and a link's
preset read only by the tab the link opens."""

import pytest

from ui.beams import tab as beams_tab
from ui.links import preset_in_link, slug, slugs
from ui.step import lessons
from ui.tabs import specs

# every tab with presets, by its id in a link, and its presets by name
PRESETS_BY_TAB = {spec.id: spec.presets for spec in specs() if spec.presets}


def test_a_link_name_is_the_text_before_the_colon_lowercase_with_dashes():
    assert slug("Confident: capital of France") == "confident"
    assert slug("Greedy loop") == "greedy-loop"
    assert slug("2 + 2: a more probable answer") == "2-2"
    assert slug("a date as YYYY-MM-DD") == "a-date-as-yyyy-mm-dd"
    assert slug("Copy-edit: prompt lookup shines") == "copy-edit"


def test_the_step_tabs_links_already_sent_to_classes_keep_their_names():
    assert slugs(lessons.PRESETS) == lessons.SLUGS
    assert set(lessons.SLUGS) == {"confident", "open", "greedy-loop", "high-temperature"}


@pytest.mark.parametrize("tab", PRESETS_BY_TAB)
def test_every_preset_of_every_tab_has_its_own_link_name(tab):
    names = slugs(PRESETS_BY_TAB[tab])
    assert sorted(names.values()) == sorted(PRESETS_BY_TAB[tab])
    assert all(link == slug(name) for link, name in names.items())


def test_a_known_link_name_picks_its_preset_and_says_nothing():
    asked = preset_in_link({"tab": "beams", "preset": "name-a-color"}, "beams", beams_tab.PRESETS)
    assert asked == ("name a color: the safe refusal", "")


def test_an_unknown_link_name_picks_none_and_says_which_names_there_are():
    asked = preset_in_link({"tab": "beams", "preset": "nope"}, "beams", beams_tab.PRESETS)
    assert asked.name is None
    assert "nope" in asked.message and "name-a-color" in asked.message and "lab-error" in asked.message


def test_a_link_to_another_tab_picks_nothing_here():
    assert preset_in_link({"tab": "sandbox", "preset": "flat"}, "beams", beams_tab.PRESETS) == (None, "")
    assert preset_in_link({"tab": "beams"}, "beams", beams_tab.PRESETS) == (None, "")


def test_the_step_tab_ignores_a_preset_meant_for_another_tab():
    from ui.step.links import settings_from_link

    name, _, problems = settings_from_link({"tab": "step", "preset": "greedy-loop"})
    assert name == "Greedy loop" and not problems
    name, _, problems = settings_from_link({"tab": "beams", "preset": "name-a-color", "temperature": "9"})
    assert name == lessons.DEFAULT_PRESET and not problems
