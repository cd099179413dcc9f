"""Figures are serialised straight from their data (visuals.theme.Drawn): the JSON the browser gets must be the
JSON plotly itself writes for the same figure, template and all, for every figure the Step tab redraws per step."""

import json

import plotly.graph_objects as go
import pytest

from visuals.theme import empty_figure, figure_from

FIGURES = {
    "empty": lambda: empty_figure("Press Prefill"),
    "titles written as strings": lambda: figure_from(
        [{"type": "bar", "x": ["a"], "y": [1.0]}], {"title": "t", "xaxis": {"title": "x"}, "yaxis2": {"title": "y"}}
    ),
    "a gap and an unset property": lambda: figure_from(
        [{"type": "bar", "x": ["a", "b"], "y": [0.5, float("nan")], "name": None}], {"title": None, "height": 200}
    ),
}


def plotly_json(fig) -> dict:
    return json.loads(go.Figure(fig._plain, _validate=False).to_json())


@pytest.mark.parametrize("name", FIGURES)
def test_the_json_is_what_plotly_writes(name):
    fig = FIGURES[name]()
    assert json.loads(fig.to_json()) == plotly_json(fig)


def test_read_or_changed_as_a_plotly_figure_it_serialises_the_change():
    fig = FIGURES["a gap and an unset property"]()
    assert fig.data and fig.layout.height  # read as plotly reads it
    fig.update_layout(height=123)
    assert json.loads(fig.to_json())["layout"]["height"] == 123


@pytest.mark.parametrize("name", FIGURES)
def test_axis_titles_are_objects_as_plotly_js_3_reads_them(name):
    """Unvalidated data skips plotly's conversion of `title: "text"` into `title: {text: ...}`; plotly.js 3 draws
    only the object form, so a plain string would leave the axis without its title."""
    layout = json.loads(FIGURES[name]().to_json())["layout"]
    assert not isinstance(layout.get("title"), str)
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and "title" in axis:
            assert isinstance(axis["title"], dict), f"{name}: {key}.title is {axis['title']!r}"
