"""What a constraint is: a JSON schema, a regular expression, a choice among strings or a small Lark grammar,
compiled by llguidance into one grammar over the model's tokens.

A constraint that cannot compile gets a ValueError naming what is wrong (the schema's bad keyword, the regex's
unclosed class, the grammar's line), so the person can fix it and the session goes on.
"""

import json
from dataclasses import dataclass

from llguidance import LLMatcher

KINDS = ("json_schema", "regex", "choices", "lark")
KIND_LABELS = {"json_schema": "JSON schema", "regex": "regular expression", "choices": "choice", "lark": "Lark grammar"}
MAX_TEXT = 20_000  # characters of a constraint's text
MAX_CHOICES = 64
# JSON as people write it, one line: `{"name": "Ana", "age": 30}`. No free whitespace: a small model given
# "any whitespace here" can write newlines forever, and the output would never end.
JSON_LAYOUT = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


@dataclass(frozen=True)
class Constraint:
    kind: str  # one of KINDS
    text: str  # the schema as JSON, the regex, the choices one per line, or the Lark grammar

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"the constraint kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError(f"the {self.label} is empty: type one (or pick a preset)")
        if len(self.text) > MAX_TEXT:
            raise ValueError(f"the {self.label} has {len(self.text):,} characters; the limit is {MAX_TEXT:,}")

    @property
    def label(self) -> str:
        return KIND_LABELS[self.kind]

    def choices(self) -> list[str]:
        """The strings of a choice constraint, one per line (or comma-separated on one line), blanks dropped."""
        lines = self.text.splitlines() if "\n" in self.text.strip() else self.text.split(",")
        items = [s.strip() for s in lines if s.strip()]
        if len(items) > MAX_CHOICES:
            raise ValueError(f"a choice takes at most {MAX_CHOICES} strings, got {len(items)}")
        return items

    def schema(self) -> dict:
        """A JSON schema constraint's schema, parsed; a ValueError says where the JSON breaks."""
        try:
            schema = json.loads(self.text)
        except json.JSONDecodeError as err:
            raise ValueError(
                f"the JSON schema is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}"
            ) from None
        if not isinstance(schema, dict):
            raise ValueError(f"a JSON schema must be a JSON object ({{...}}), got {type(schema).__name__}")
        return schema


def grammar_text(c: Constraint) -> str:
    """llguidance's grammar for the constraint (not yet checked: `compile_grammar` checks it)."""
    if c.kind == "json_schema":
        return LLMatcher.grammar_from_json_schema(c.schema(), overrides=JSON_LAYOUT)
    if c.kind == "regex":
        return LLMatcher.grammar_from_regex(c.text)
    if c.kind == "choices":
        # a choice is the smallest grammar: start is one of the quoted strings
        return LLMatcher.grammar_from_lark("start: " + " | ".join(json.dumps(s) for s in c.choices()))
    return LLMatcher.grammar_from_lark(c.text)


def compile_grammar(c: Constraint, tokenizer_view) -> str:
    """The checked grammar, or a ValueError with llguidance's own diagnosis (which keyword, which character)."""
    grammar = grammar_text(c)
    error = LLMatcher.validate_grammar(grammar, tokenizer_view)
    if error:
        raise ValueError(f"the {c.label} does not compile: {_first_lines(error)}")
    return grammar


def _first_lines(error: str, n: int = 3) -> str:
    # llguidance's messages end with a dump of its state; its "error:" line (regexes) or first lines say what is wrong
    lines = [ln.strip() for ln in error.strip().splitlines() if ln.strip() and not ln.startswith("<")]
    said = [ln.removeprefix("error: ") for ln in lines if ln.startswith("error:")]
    return said[0] if said else " ".join(lines[:n])
