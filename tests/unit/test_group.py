"""ui/group.py: a group of components read by name, and a handler's controls read from a page by field name."""

from dataclasses import dataclass
from typing import Any

import pytest

from ui.group import Group, controls_from


@dataclass(frozen=True)
class Knobs(Group):
    temperature: object
    top_k: object


@dataclass(frozen=True)
class Page:
    prompt: object
    seed: object
    knobs: Knobs
    step: object  # a component the controls do not read


@dataclass
class Controls:
    prompt: Any
    seed: Any
    knobs: dict


# plain objects stand in for components: gradio hands a handler {component: value}, keyed by the component itself
PAGE = Page(prompt=object(), seed=object(), knobs=Knobs(temperature=object(), top_k=object()), step=object())
GIVEN = {PAGE.prompt: "Hello", PAGE.seed: 7, PAGE.knobs.temperature: 0.5, PAGE.knobs.top_k: 40}


def test_a_group_reads_its_values_by_name():
    assert PAGE.knobs.read(GIVEN) == {"temperature": 0.5, "top_k": 40}
    assert PAGE.knobs.components() == {PAGE.knobs.temperature, PAGE.knobs.top_k}


def test_controls_are_read_from_the_components_named_as_their_fields_and_a_group_by_name():
    read = controls_from(Controls, PAGE, GIVEN)
    assert read == Controls(prompt="Hello", seed=7, knobs={"temperature": 0.5, "top_k": 40})


def test_a_field_the_page_has_no_component_for_is_an_error_not_a_default():
    @dataclass
    class Other:
        prompt: Any
        fast_forward: Any

    with pytest.raises(AttributeError, match="fast_forward"):
        controls_from(Other, PAGE, GIVEN)
