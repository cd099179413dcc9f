"""The constrained tab's handlers on the tiny model: a step shows the grammar's row, Force refuses an illegal token
naming the legal ones and the run goes on, Back undoes a decision with its forced tokens, bad grammars are named."""

import pytest

from decoding.models import TINY
from ui import constrained_handlers as h
from ui.context import AppConfig

CONFIG = AppConfig(model_id=TINY, device="cpu")
DATE = ("When?", "regular expression", "(19|20)[0-9]{2}-(0[1-9]|1[0-2])-[0-3][0-9]", 0, 24, True)
JSON = ("Who?", "JSON schema", '{"type": "object", "properties": {"a": {"type": "integer", "minimum": 0, '
        '"maximum": 9}}, "required": ["a"], "additionalProperties": false}', 0, 24, True)  # fmt: skip
KNOBS = ("transformers", 1.0, 0, 1.0)


@pytest.fixture(autouse=True)
def no_scheduler(monkeypatch):
    monkeypatch.setattr(h, "scheduler_for", lambda lm: None)


def test_a_step_shows_the_grammar_row_and_the_illegal_mass():
    run_id, status, answer, chart, rows, orders = h.step(CONFIG, None, *DATE, *KNOBS)
    assert run_id and "1 sampled" in status and "**grammar**: 2 of 259 legal" in rows and "illegal mass" in rows
    assert "transformers" in orders and "llama.cpp" in orders


def test_force_refuses_an_illegal_token_naming_the_legal_ones_and_the_run_goes_on():
    run_id, *_ = h.step(CONFIG, None, *DATE, *KNOBS)
    with pytest.raises(ValueError, match=r"token 'x' .* not legal .* allows"):
        h.force(CONFIG, run_id, *DATE, *KNOBS, "x")
    _, status, *_ = h.step(CONFIG, run_id, *DATE, *KNOBS)
    assert status.startswith("**2 tokens**") or "forced" in status


def test_back_undoes_the_forced_tokens_with_the_decision_before_them():
    run_id, *_ = h.step(CONFIG, None, *JSON, *KNOBS)  # {"a": forced, then nothing sampled yet
    run_id, status, *_ = h.step(CONFIG, run_id, *JSON, *KNOBS)  # the digit, then } and the end forced
    after_two = status
    run_id, status, *_ = h.back(run_id, *KNOBS)
    assert status != after_two and "1 sampled" not in status.split("·")[0] or "0 sampled" in status
    run_id, again, *_ = h.step(CONFIG, run_id, *JSON, *KNOBS)
    assert again == after_two


@pytest.mark.parametrize(
    ("kind", "text", "said"),
    [("regular expression", "[a-", "unclosed character class"), ("JSON schema", "{bad", "not valid JSON")],
)
def test_a_malformed_grammar_is_named_and_a_good_one_then_runs(kind, text, said):
    with pytest.raises(ValueError, match=said):
        h.step(CONFIG, None, "When?", kind, text, 0, 24, True, *KNOBS)
    assert h.step(CONFIG, None, *DATE, *KNOBS)[0]
