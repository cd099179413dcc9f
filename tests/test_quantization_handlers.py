"""The quantization tab's handlers on the tiny model: a step answers every output by name, Back and Reset work, and a
bad format, step count, prompt or held-out length is said naming the control and what it allows."""

import pytest

from decoding.quantization.formats import FORMATS
from ui import quantization_handlers as h
from ui import quantization_measure as m
from ui.context import AppConfig

CONFIG = AppConfig("tiny-random", "cpu")
CONTROLS = h.Controls(prompt="hello world", template="raw text", fmt="int8", steps=3)


def test_every_format_but_float32_is_offered_new_ones_included():
    assert [name for name in FORMATS if name != "float32"] == h.CHOICES


def test_a_step_run_back_and_reset_answer_the_whole_view():
    view = h.step(CONFIG, None, CONTROLS)
    assert view.sid and "step 1" in view.status and "Same top-1 at" in view.status
    view = h.run_n(CONFIG, view.sid, CONTROLS)
    assert "step 4" in view.status and view.streams.count("q-chip") == 8
    view = h.back(view.sid)
    assert "step 3" in view.status
    assert h.reset(view.sid).sid is None
    with pytest.raises(ValueError, match="no run in this session"):
        h.back(view.sid)


@pytest.mark.parametrize(
    "change, said",
    [
        (dict(fmt="int3"), "Format must be one of 'bfloat16', 'int8'"),
        (dict(fmt="float32"), "Format must be one of"),
        (dict(steps=0), r"Steps per Run \(1-64\)"),
        (dict(steps=2.5), r"Steps per Run \(1-64\)"),
        (dict(prompt="  "), "the prompt is empty"),
    ],
)
def test_a_bad_value_names_the_control_and_its_range(change, said):
    controls = h.Controls(**{**CONTROLS.__dict__, **change})
    with pytest.raises(ValueError, match=said):
        h.run_n(CONFIG, None, controls)


def test_the_quality_box_and_the_formats_are_checked_before_anything_runs():
    with pytest.raises(ValueError, match=r"Held-out tokens to score.*-4"):
        m.score(CONFIG, ["int8"], -4, progress=lambda *a, **k: None)
    with pytest.raises(ValueError, match="Formats: tick at least one"):
        m.score(CONFIG, [], 16, progress=lambda *a, **k: None)
