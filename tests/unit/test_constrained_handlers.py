"""The constrained tab's handlers on the tiny model: a step shows the grammar's row, Force refuses an illegal token
naming the legal ones and the run goes on, Back undoes a decision with its forced tokens, bad grammars are named,
and a bad seed or top-k is said in the tab's message line naming the control, every other output left as it was."""

import dataclasses
import html

import pytest

from decoding.models import TINY
from tests.helpers.wiring import page, wired
from ui.constrained import handlers as h
from ui.constrained import measure as constrained_measure
from ui.constrained import tab
from ui.context import AppConfig
from ui.events import teach
from ui.sessions import STORE
from visuals.constrained import views as draw

CONFIG = AppConfig(model_id=TINY, device="cpu")
KNOBS = {"order": "transformers", "temperature": 1.0, "top_k": 0, "top_p": 1.0}
DATE = h.Controls(
    prompt="When?",
    kind="regular expression",
    text="(19|20)[0-9]{2}-(0[1-9]|1[0-2])-[0-3][0-9]",
    seed=0,
    max_new=24,
    fast_forward=True,
    knobs=KNOBS,
)
JSON = dataclasses.replace(
    DATE,
    prompt="Who?",
    kind="JSON schema",
    text='{"type": "object", "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 9}}, "required": ["a"], '
    '"additionalProperties": false}',
)


@pytest.fixture(autouse=True)
def no_scheduler(monkeypatch):
    monkeypatch.setattr(h, "scheduler_for", lambda lm: None)


def part(out: h.View, name: str) -> str:
    """A part of the step's view as the page shows it after `out`: its run's view as last sent (ui/patch.py)."""
    return STORE.get(out.run_id).view.sent.slots[f"#constrained-{name}"]


def test_a_step_shows_the_grammar_row_and_the_illegal_mass():
    out = h.step(CONFIG, None, DATE)
    assert out.run_id and "1 sampled" in part(out, "status") and "<b>grammar</b>: 2 of 259 legal" in part(out, "rows")
    assert "illegal mass" in part(out, "rows")
    assert "transformers" in out.orders and "llama.cpp" in out.orders
    assert "html" in out.shown  # a new run's first answer is whole; the next Step sends what it changed
    again = h.step(CONFIG, out.run_id, DATE)
    assert {op[1] for op in again.shown["ops"]} <= {
        "#constrained-status",
        "#constrained-answer .chips",
        "#constrained-chart",
        "#constrained-rows",
    }
    assert ["drop", "#constrained-answer .chips", 0] not in again.shown["ops"]
    assert h.whole(out.run_id)["html"] == STORE.get(out.run_id).view.sent.html  # for a page that missed a change


def test_force_refuses_an_illegal_token_naming_the_legal_ones_and_the_run_goes_on():
    run_id = h.step(CONFIG, None, DATE).run_id
    with pytest.raises(ValueError, match=r"token 'x' .* not legal .* allows"):
        h.force(CONFIG, run_id, DATE, "x")
    status = part(h.step(CONFIG, run_id, DATE), "status")
    assert status.startswith("<b>2 tokens</b>") or "forced" in status


def test_back_undoes_the_forced_tokens_with_the_decision_before_them():
    run_id = h.step(CONFIG, None, JSON).run_id  # {"a": forced, then nothing sampled yet
    out = h.step(CONFIG, run_id, JSON)  # the digit, then } and the end forced
    after_two = part(out, "status")
    out = h.back(out.run_id, JSON)
    back = part(out, "status")
    assert back != after_two and "1 sampled" not in back.split("·")[0] or "0 sampled" in back
    again = h.step(CONFIG, out.run_id, JSON)
    assert part(again, "status") == after_two


def test_a_step_of_only_forced_tokens_no_longer_asks_to_press_step():
    out = h.step(CONFIG, None, JSON)  # {"a": forced, nothing sampled yet
    chart = part(out, "chart")
    assert "0 sampled" in part(out, "status") and html.escape(h.ALL_FORCED) in chart and "Press Step" not in chart


def test_a_token_typed_with_force_is_not_counted_as_sampled():
    run_id = h.step(CONFIG, None, DATE).run_id
    out = h.force(CONFIG, run_id, DATE, "9")
    assert ": 1 sampled" in part(out, "status") and "1 typed by you (Force)" in part(out, "status")


def test_the_engine_table_follows_a_knob_without_a_step():
    run_id = h.step(CONFIG, None, DATE).run_id
    at_two = h.orders_now(CONFIG, run_id, dataclasses.replace(DATE, knobs={**KNOBS, "top_k": 1}))
    assert "for the next token, position " in at_two and "top-k 1" in at_two
    assert "top-k 0" in h.orders_now(CONFIG, run_id, DATE)


def test_a_cancelled_measurement_says_how_far_it_got():
    from decoding.constrained.measure import Comparison

    result = Comparison(DATE, None)
    result.unconstrained = [None] * 3
    assert draw.cancelled_note(result, 20).startswith("Cancelled after 3 of 20 samples without the constraint")
    result.unconstrained, result.constrained = [None] * 20, [None] * 4
    assert "and 4 of 20 with it" in draw.cancelled_note(result, 20)


@pytest.mark.parametrize(
    ("kind", "text", "said"),
    [("regular expression", "[a-", "unclosed character class"), ("JSON schema", "{bad", "not valid JSON")],
)
def test_a_malformed_grammar_is_named_and_a_good_one_then_runs(kind, text, said):
    with pytest.raises(ValueError, match=said):
        h.step(CONFIG, None, dataclasses.replace(DATE, kind=kind, text=text))
    assert h.step(CONFIG, None, DATE).run_id


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"seed": -1}, "Seed must be a whole number in [0, 4294967295], got -1"),
        ({"seed": 2**32}, "Seed must be a whole number in [0, 4294967295], got 4294967296"),
        ({"knobs": {**KNOBS, "top_k": -4}}, "Top-k must be a whole number in [0, 200] (0 = off), got -4"),
        ({"knobs": {**KNOBS, "top_k": 201}}, "Top-k must be a whole number in [0, 200] (0 = off), got 201"),
        ({"max_new": 0}, "Max new tokens must be a whole number in [1, 96], got 0"),
    ],
)
def test_a_bad_seed_or_top_k_is_said_in_the_message_line_naming_the_control_and_the_run_goes_on(change, said):
    run_id = h.step(CONFIG, None, DATE).run_id
    out = teach(h.step, message="message line")(CONFIG, run_id, dataclasses.replace(DATE, **change))
    assert list(out) == ["message line"]  # the other outputs keep what they show: no "Error" badge on each
    assert html.escape(said) in out["message line"] and "lab-error" in out["message line"]
    assert ": 2 sampled" in part(h.step(CONFIG, run_id, DATE), "status")  # the same run, one decision on


def test_the_measurement_refuses_a_bad_sample_count_naming_it():
    with pytest.raises(ValueError, match=r"Samples must be a whole number in \[1, \d+\], got 0"):
        constrained_measure.measure(CONFIG, DATE, 0)


def test_the_page_answers_each_output_by_its_component_and_a_bad_top_k_in_the_message_line_alone():
    demo, c = page(tab, CONFIG)
    given = {c.run_id: None, c.prompt: DATE.prompt, c.kind: DATE.kind, c.text: DATE.text, c.seed: 0, c.max_new: 24}
    given |= {c.fast_forward: True, **{getattr(c.knobs, field): v for field, v in KNOBS.items()}}
    out = wired(demo, c.step)(given)
    # the run id, the step's view and the engines' table: three outputs and the message line, where there were six
    assert set(out) == {c.view.run_id, c.view.shown, c.view.orders, c.message} and out[c.message] == ""
    assert "1 sampled" in out[c.view.shown]["html"] and out[c.view.run_id]
    bad = wired(demo, c.step)({**given, c.run_id: out[c.view.run_id], c.knobs.top_k: -4})
    assert list(bad) == [c.message] and "Top-k must be a whole number in [0, 200]" in bad[c.message]
    refused = wired(demo, c.force)({**given, c.run_id: out[c.view.run_id], c.token: "x"})
    assert list(refused) == [c.message] and "is not legal here" in refused[c.message]


def test_a_preset_sets_its_controls_by_name_and_an_unknown_one_changes_nothing():
    _, c = page(tab, CONFIG)
    said = tab.apply_preset(c, "answer yes or no")
    assert set(said) == {c.prompt, c.kind, c.text, c.max_new, c.note}
    assert tab.apply_preset(c, "no such preset") == {}


def test_the_sampler_controls_are_drawn_from_the_knobs_ranges_and_labels():
    _, c = page(tab, CONFIG)
    for field in ("temperature", "top_p"):
        slider, knob = getattr(c.knobs, field), tab.KNOBS[field]
        assert (slider.minimum, slider.maximum, slider.step, slider.label) == (knob.lo, knob.hi, knob.step, knob.label)
    assert c.knobs.top_k.label == tab.KNOBS["top_k"].label
