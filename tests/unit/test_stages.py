"""Each sampler stage is one object (decoding.stages): its field, range, neutral value, kind, labels and colour live
together, and the pipeline, the knobs, the sandbox and the charts read them from it. Its math is one function in
decoding.samplers, paired with it in the pipeline (`MATH`): neither module reads the other."""

import ast
import dataclasses
from pathlib import Path

import pytest
import torch

from decoding import samplers, stages
from decoding.knobs import KNOBS
from decoding.pipeline import MATH, ORDERS, SamplerSettings, apply_stage, process
from decoding.stages import FILTER, FILTERS, PENALTIES, STAGES
from visuals.theme import REMOVED, STAGE_LABELS

LOGITS = torch.tensor([3.0, 2.0, 1.0, 0.0])  # a hand-sized vocabulary of four


def test_the_settings_default_to_every_stages_neutral_value_and_nothing_runs():
    defaults = SamplerSettings()
    assert {s.field for s in STAGES.values()} == {f.name for f in dataclasses.fields(SamplerSettings)} - {"order"}
    for stage in STAGES.values():
        assert getattr(defaults, stage.field) == stage.neutral and not stage.enabled(stage.neutral)
    assert defaults.stages() == ()


def test_every_engine_orders_every_stage_once():
    for order in ORDERS.values():
        assert sorted(order) == sorted(STAGES)


@pytest.mark.parametrize("name", list(STAGES))
def test_a_stages_teaching_range_lies_inside_the_engines(name):
    stage, t = STAGES[name], STAGES[name].teaching
    for value in (t.lo, t.hi, stage.neutral):
        stage.check(int(value) if t.whole else value)


@pytest.mark.parametrize("name", list(STAGES))
def test_a_value_outside_the_range_names_the_knob_and_the_range(name):
    stage = STAGES[name]
    with pytest.raises(ValueError, match=f"{stage.field} must be .*got -5"):
        stage.check(-5)


@pytest.mark.parametrize("name", FILTERS)
def test_a_filter_returns_a_keep_mask_and_leaves_its_input_alone(name):
    stage, before = STAGES[name], LOGITS.clone()
    value = stage.usual if stage.usual is not None else (0.5 if stage.neutral == 1.0 else 0.01)
    keep = apply_stage(stage, LOGITS, [], value)
    assert keep.dtype == torch.bool and keep.shape == LOGITS.shape and bool(keep[0])  # the top token always stays
    assert torch.equal(LOGITS, before)


def test_the_pipeline_runs_a_stage_exactly_as_the_stage_alone():
    settings = SamplerSettings(min_p=0.3)
    alone = apply_stage(STAGES["min_p"], LOGITS, [], 0.3)
    assert process(LOGITS, settings, [], []).kept == (int(alone.sum()),)


def test_the_knobs_charts_and_colours_read_the_stages():
    assert KNOBS["min_p"].label == STAGES["min_p"].control and KNOBS["min_p"].off == STAGES["min_p"].neutral
    assert STAGE_LABELS["min_p"] == STAGES["min_p"].label
    assert {name for name in REMOVED if name != "grammar"} == {n for n, s in STAGES.items() if s.kind == FILTER}
    assert PENALTIES == ("repetition", "frequency", "presence")  # the order every engine applies them in


def test_each_stage_is_a_constant_named_as_its_record():
    for name, stage in STAGES.items():
        assert getattr(stages, name.upper()) is stage


def test_every_stage_has_one_sampler_function_for_its_math():
    assert set(MATH) == set(STAGES)
    for name, fn in MATH.items():
        assert fn.__module__ == samplers.__name__ and getattr(samplers, fn.__name__) is fn, name
    # one function per stage: no two stages share one (and so no stage names it a second time, as a string)
    assert len({fn for fn in MATH.values()}) == len(MATH)
    assert not any(
        isinstance(getattr(stage, f.name), str) and getattr(stage, f.name) in dir(samplers)
        for stage in STAGES.values()
        for f in dataclasses.fields(stage)
    )


def _imported(module) -> set[str]:
    """Every module `module`'s source imports, at its top or inside a function, read from its syntax tree."""
    tree = ast.parse(Path(module.__file__).read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module or "")
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_the_stages_and_the_samplers_never_import_each_other():
    assert not {"decoding.samplers", "decoding.stages"} & _imported(stages), "decoding.stages imports the samplers"
    assert not {"decoding.stages", "decoding.samplers"} & _imported(samplers), "decoding.samplers imports the stages"
    # and the stages stay plain data: the charts read them without torch
    assert not {name for name in _imported(stages) if name.split(".")[0] == "torch"}


def test_a_stages_value_is_checked_by_its_range_before_its_math():
    with pytest.raises(ValueError, match=r"min_p must be in \[0, 1\) \(0 = off\), got 1.5"):
        apply_stage(stages.MIN_P, LOGITS, [], 1.5)


def test_only_the_repetition_penalty_counts_the_prompts_tokens():
    assert [name for name, stage in STAGES.items() if stage.counts_prompt] == [stages.REPETITION.name]
