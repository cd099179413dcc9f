"""Does an answer satisfy its constraint? Checked without llguidance, so the constrained runs are not graded by
the library that produced them: JSON is parsed by Python's json and checked against the schema's common keywords;
a regex (and a schema's "pattern") by RE2, a matcher that never backtracks; a choice by equality. A Lark grammar has
no second parser here: its answers are checked by a fresh llguidance matcher on the text's bytes (not on the tokens
that were generated).

The whole answer must match (surrounding spaces aside): a sentence around a valid date is not a valid date.

Why RE2 and not Python's `re`: the regex is typed by a learner, and `re` backtracks. `(.+)+X` against a 40-character
answer takes `re` minutes, holding the interpreter lock the whole time, so every other student's request waits:
one input froze the whole server. RE2 matches in time linear in the text, whatever the pattern (`(.+)+X`: 0.1 ms).
It reads the syntax llguidance's regexes use (no look-around, no back-references); one difference with `re`: its
digit class is the ASCII digits, not every Unicode digit.
"""

import json

import re2

from decoding.constrained.kinds import Constraint

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a bad pattern is said to the learner, not written to the server's log

TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "null": type(None),
}


def check_output(c: Constraint, text: str, matcher_factory=None) -> str | None:
    """None when `text` satisfies `c`, else a short reason. `matcher_factory(text) -> bool` checks Lark answers."""
    answer = text.strip()
    if c.kind == "choices":
        return None if answer in c.choices() else f"{_short(answer)} is not one of {c.choices()}"
    if c.kind == "regex":
        return _mismatch(c.text, answer, True, f"{_short(answer)} does not match the whole regex")
    if c.kind == "json_schema":
        try:
            value = json.loads(answer)
        except json.JSONDecodeError as err:
            return f"not JSON: {err.msg} at column {err.colno}"
        return schema_error(c.schema(), value)
    assert matcher_factory is not None, "a Lark grammar needs a matcher to check answers"
    return None if matcher_factory(answer) else f"{_short(answer)} does not parse under the grammar"


def schema_error(schema: dict, value, path: str = "$") -> str | None:
    """The first way `value` breaks `schema` (type, enum, properties, required, additionalProperties, items,
    minimum/maximum, minLength/maxLength, pattern), or None."""
    expected = schema.get("type")
    if expected is not None:
        kinds = expected if isinstance(expected, list) else [expected]
        if not any(_is(value, k) for k in kinds if k in TYPES):
            return f"{path} should be {expected}, got {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path} should be one of {schema['enum']}"
    if isinstance(value, dict):
        return _object_error(schema, value, path)
    if isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return None
        return next((e for i, v in enumerate(value) if (e := schema_error(items, v, f"{path}[{i}]"))), None)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and not schema.get("minimum", value) <= value <= schema.get("maximum", value):
        return f"{path} = {value} is outside [{schema.get('minimum', '-inf')}, {schema.get('maximum', 'inf')}]"
    if isinstance(value, str):
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
            return f"{path} has {len(value)} characters, outside the schema's length bounds"
        if "pattern" in schema:
            pattern = schema["pattern"]
            return _mismatch(pattern, value, False, f"{path} does not match the pattern {pattern!r}")
    return None


def _object_error(schema: dict, value: dict, path: str) -> str | None:
    missing = [k for k in schema.get("required", []) if k not in value]
    if missing:
        return f"{path} is missing {missing}"
    properties = schema.get("properties", {})
    if schema.get("additionalProperties") is False:
        extra = [k for k in value if k not in properties]
        if extra:
            return f"{path} has keys the schema does not allow: {extra}"
    errors = (schema_error(properties[k], v, f"{path}.{k}") for k, v in value.items() if k in properties)
    return next((e for e in errors if e), None)


def _mismatch(pattern: str, text: str, whole: bool, reason: str) -> str | None:
    """None when `pattern` matches `text` (all of it, or anywhere in it), else `reason`; or why RE2 cannot read the
    pattern (a back-reference, a look-around, a repetition too large to build)."""
    try:
        compiled = re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        return f"the checker (RE2) cannot read the regex {_short(pattern)}: {_said(err)}"
    return None if (compiled.fullmatch if whole else compiled.search)(text) else reason


def _said(err: Exception) -> str:
    reason = err.args[0] if err.args else err
    return reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)


def _is(value, kind: str) -> bool:
    """`value` has the JSON schema type `kind` (bool is an int in Python, never in JSON)."""
    return isinstance(value, TYPES[kind]) and not (kind in ("integer", "number") and isinstance(value, bool))


def _short(text: str, n: int = 40) -> str:
    return repr(text if len(text) <= n else text[: n - 1] + "…")
