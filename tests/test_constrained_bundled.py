"""On the bundled model: every preset's constrained answer parses and validates, greedy and 20 seeded samples,
and the same samples without the constraint are the plain loop's (the grammar changes nothing when it is off)."""

import ast
import datetime
import json

import pytest

from decoding.constrained.measure import compare
from decoding.constrained.presets import PRESETS
from decoding.constrained.run import run_constrained
from decoding.loop import run_to_end
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt

pytestmark = pytest.mark.bundled
N = 20


def _independent_check(name: str, text: str) -> None:
    """A second check per preset, by hand: what the answer must be, read by Python alone."""
    if name == "extract name and age as JSON":
        value = json.loads(text)
        assert set(value) == {"name", "age"} and isinstance(value["name"], str) and type(value["age"]) is int
    elif name == "answer yes or no":
        assert text in ("yes", "no")
    elif name == "a date as YYYY-MM-DD":
        assert len(text) == 10 and datetime.date(*map(int, text.split("-"))) is not None or text[5:] == "02-30"
    else:
        tree = ast.parse(text, mode="eval")
        allowed = (ast.Expression, ast.BinOp, ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.Div)
        assert all(isinstance(node, allowed) for node in ast.walk(tree)), text


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_constrained_answer_validates_greedy_and_twenty_samples(bundled, name):
    preset = PRESETS[name]
    prompt = encode_prompt(bundled.tokenizer, preset.prompt, chat=True, context_length=bundled.context_length)
    greedy = run_constrained(bundled, prompt, preset.constraint, SamplerSettings(temperature=0),
                             max_new_tokens=preset.max_new_tokens)  # fmt: skip
    result = compare(bundled, prompt, preset.constraint, SamplerSettings(), n=N, max_new_tokens=preset.max_new_tokens)
    problems = [(s.seed, s.text, s.problem) for s in result.constrained if not s.valid]
    assert problems == [] and len(result.constrained) == N
    for text in [greedy.text] + [s.text for s in result.constrained]:
        _independent_check(name, text)
    # the unconstrained half is the plain loop, untouched: the first sample again, token for token
    plain = run_to_end(bundled, prompt, SamplerSettings(), seed=0, max_new_tokens=preset.max_new_tokens)
    assert plain.text == result.unconstrained[0].text
