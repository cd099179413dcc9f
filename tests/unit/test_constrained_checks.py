"""Answers are checked without llguidance: Python's json and a schema's common keywords, re, equality."""

import json

import pytest

from decoding.constrained.checks import check_output, schema_error
from decoding.constrained.kinds import Constraint
from decoding.constrained.presets import PERSON, PRESETS

SCHEMA = Constraint("json_schema", json.dumps(PERSON))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"name": "Ana", "age": 30}', None),
        ('{\n  "age": 30,\n  "name": "Ana"\n}', None),  # any layout, any key order: JSON Schema allows both
        ('```json\n{"name": "Ana", "age": 30}\n```', "not JSON"),
        ('{"name": "Ana"}', r"missing \['age'\]"),
        ('{"name": "Ana", "age": "30"}', r"\$.age should be integer, got str"),
        ('{"name": "Ana", "age": true}', r"\$.age should be integer, got bool"),
        ('{"name": "Ana", "age": 200}', r"outside \[0, 150\]"),
        ('{"name": "Ana", "age": 3, "city": "Madrid"}', r"does not allow: \['city'\]"),
    ],
)
def test_json_answers_parse_and_validate_against_the_schema(text, problem):
    said = check_output(SCHEMA, text)
    assert said is None if problem is None else __import__("re").search(problem, said)


def test_a_date_must_be_the_whole_answer():
    date = PRESETS["a date as YYYY-MM-DD"].constraint
    assert check_output(date, " 1969-07-20\n") is None
    assert check_output(date, "It was 1969-07-20.") is not None and check_output(date, "1969-13-20") is not None


def test_a_choice_is_one_of_its_strings_exactly():
    choice = Constraint("choices", "yes\nno")
    assert choice.choices() == ["yes", "no"] == Constraint("choices", "yes, no").choices()
    assert check_output(choice, "no") is None and check_output(choice, "Yes") is not None


def test_schema_error_reads_items_and_patterns():
    schema = {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}}
    assert schema_error(schema, ["ab", "cd"]) is None and "$[1]" in schema_error(schema, ["ab", "C"])


@pytest.mark.parametrize(
    ("pattern", "valid"),
    [(r"(.+)+X", "aaX"), (r"(?:.|.){0,26}X", "a" * 26 + "X"), (r"(a|aa)+", "aaa"), (r"(\w+\s?)+X", "a b X")],
)
def test_a_backtracking_regex_gets_its_answer_from_a_matcher_that_never_backtracks(pattern, valid):
    # Python's re takes seconds to minutes on the 40-character answer that almost matches (it froze the server);
    # RE2's answer is the same as re's would be, either way
    regex = Constraint("regex", pattern)
    assert "does not match" in check_output(regex, "a" * 40 + "!")
    assert check_output(regex, valid) is None


def test_a_regex_the_checker_cannot_read_says_so_instead_of_failing_the_run():
    said = check_output(Constraint("regex", r"(?=a)a"), "a")
    assert said.startswith("the checker (RE2) cannot read the regex") and "(?=" in said


def test_a_schema_pattern_is_searched_without_backtracking():
    schema = {"type": "string", "pattern": r"^(.+)+X$"}
    assert "does not match the pattern" in schema_error(schema, "a" * 40)
    assert schema_error(schema, "abcX") is None and schema_error({"pattern": "b"}, "abc") is None
