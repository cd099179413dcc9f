"""A trace is plain data: it survives JSON and CSV, and says which steps were decode steps."""

import copy
import csv
import dataclasses
import io
import json

import pytest

from decoding.loop import run_to_end
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.trace import Candidate, Step, Trace


def _step(index: int, phase: str, token_id: int, forward_ms: float) -> Step:
    top = [
        Candidate(id=token_id, text="a", logit=2.5, prob_before=0.75, prob_after=1.0),
        Candidate(id=7, text='b, "c"', logit=1.0, prob_before=0.25, prob_after=0.0, removed_by="top_k"),
    ]
    return Step(
        index=index,
        phase=phase,
        token_id=token_id,
        token_text="a",
        prob_before=0.75,
        prob_after=1.0,
        rank=1,
        forced=index == 1,
        top=top,
        stages=[("top_k", 1)],
        kept_mass=0.75,
        entropy_bits=0.811,
        settings=SamplerSettings(top_k=1).to_dict(),
        forward_ms=forward_ms,
        sample_ms=0.1,
        kv_bytes=1024 * (index + 1),
        context_len=3 + index,
    )


@pytest.fixture
def trace() -> Trace:
    t = Trace(
        model_id="tiny-random",
        model_label="tiny",
        device="cpu",
        dtype="float32",
        prompt="Hi",
        prompt_ids=[1, 2, 3],
        prompt_tokens=["H", "i", "!"],
        seed=0,
        max_new_tokens=8,
        stop_strings=["User:"],
    )
    t.steps = [_step(0, "prefill", 5, 9.0), _step(1, "decode", 6, 2.0), _step(2, "decode", 5, 3.0)]
    t.prefill_ms, t.stop_reason, t.text = 9.0, "max_new_tokens", "aaa"
    return t


def test_token_ids_are_the_chosen_ids_in_order(trace):
    assert trace.token_ids == [5, 6, 5]


def test_decode_ms_lists_only_decode_steps(trace):
    assert trace.decode_ms == [2.0, 3.0]


def test_to_dict_has_the_fields_the_cli_promises(trace):
    d = trace.to_dict()
    assert d["token_ids"] == [5, 6, 5] and d["text"] == "aaa" and d["stop_reason"] == "max_new_tokens"
    assert d["timing"] == {"prefill_ms": 9.0, "decode_ms": [2.0, 3.0]}
    assert d["steps"][0]["top"][0] == {
        "id": 5,
        "text": "a",
        "logit": 2.5,
        "prob_before": 0.75,
        "prob_after": 1.0,
        "removed_by": None,
    }


def test_json_round_trip_gives_an_equal_trace(trace):
    again = Trace.from_json(trace.to_json())
    assert again == trace and again.steps[1].stages == [("top_k", 1)]


def test_csv_has_one_row_per_step_with_quoted_text(trace):
    rows = list(csv.DictReader(io.StringIO(trace.to_csv())))
    assert [int(r["token_id"]) for r in rows] == trace.token_ids
    assert [r["phase"] for r in rows] == ["prefill", "decode", "decode"]
    assert rows[1]["forced"] == "True" and rows[0]["kept_after_each_stage"] == "top_k:1"


def test_candidate_finds_a_token_in_the_top_list(trace):
    assert trace.steps[0].candidate(7).removed_by == "top_k" and trace.steps[0].candidate(99) is None


def test_a_real_trace_survives_json_csv_and_deepcopy(tiny):
    prompt = encode_prompt(tiny.tokenizer, "Once upon a time", chat=False)
    trace = run_to_end(tiny, prompt, SamplerSettings(top_k=20, temperature=0.8), seed=3, max_new_tokens=6)
    assert Trace.from_json(trace.to_json()) == trace
    assert json.loads(trace.to_json())["token_ids"] == trace.token_ids
    assert copy.deepcopy(trace) == trace
    assert len(list(csv.reader(io.StringIO(trace.to_csv())))) == 1 + len(trace.steps)


def test_a_trace_saved_with_the_old_prob_names_still_loads(trace):
    old = trace.to_dict()
    for step in old["steps"]:
        step["prob"] = step.pop("prob_after")
        for c in step["top"]:
            c["prob"] = c.pop("prob_before")
    again = Trace.from_dict(old)
    assert again == trace and again.steps[0].top[0].prob_before == 0.75 and again.steps[0].prob_after == 1.0


def test_a_trace_saved_before_passes_had_a_kind_loads_a_static_runs_steps_as_kinds(trace):
    old = json.loads(trace.to_json())
    for step, saved in zip(old["steps"], ("solo", "static", "captured")):  # a static run's prefill, then its steps
        del step["pass_kind"]
        step["pass_mode"] = saved
    again = Trace.from_json(json.dumps(old))
    assert [(s.pass_kind, s.pass_mode) for s in again.steps] == [
        ("eager", "solo"),
        ("static", "solo"),
        ("captured", "solo"),
    ]
    assert [dataclasses.replace(s, pass_kind="eager") for s in again.steps] == trace.steps  # nothing else moved
