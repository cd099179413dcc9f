"""On the bundled model: every preset's constrained answer parses and validates, greedy and 8 seeded samples,
checked twice: by the lesson's checks (measure.validator) and by hand, per preset, in Python alone."""

import ast
import json

import pytest

from decoding.constrained.measure import validator
from decoding.constrained.presets import PRESETS
from decoding.constrained.run import run_constrained
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt

pytestmark = pytest.mark.bundled
N = 8


def _independent_check(name: str, text: str) -> None:
    """A second check per preset, by hand: what the answer must be, read by Python alone."""
    if name == "extract name and age as JSON":
        value = json.loads(text)
        assert set(value) == {"name", "age"} and isinstance(value["name"], str) and type(value["age"]) is int
    elif name == "answer yes or no":
        assert text in ("yes", "no")
    elif name == "a date as YYYY-MM-DD":
        year, month, day = map(int, text.split("-"))  # the regex allows a 31st in any month: not a calendar check
        assert len(text) == 10 and 1900 <= year <= 2099 and 1 <= month <= 12 and 1 <= day <= 31
    else:
        tree = ast.parse(text, mode="eval")
        allowed = (ast.Expression, ast.BinOp, ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.Div)
        assert all(isinstance(node, allowed) for node in ast.walk(tree)), text


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_constrained_answer_validates_greedy_and_eight_samples(bundled, name):
    preset = PRESETS[name]
    prompt = encode_prompt(bundled.tokenizer, preset.prompt, chat=True, context_length=bundled.context_length)
    runs = [(SamplerSettings(temperature=0), 0)] + [(SamplerSettings(), seed) for seed in range(N)]
    check = validator(bundled, preset.constraint)
    for settings, seed in runs:
        trace = run_constrained(
            bundled, prompt, preset.constraint, settings, seed=seed, top_n=1, max_new_tokens=preset.max_new_tokens
        )
        assert trace.stop_reason == "eos" and check(trace.text) is None, (seed, trace.text)
        _independent_check(name, trace.text)
