"""The lesson's presets: a prompt and the constraint that shapes its answer. Each grammar is bounded (a longest
name, a largest age, at most four numbers), so every constrained answer ends well within its token budget."""

import json
from dataclasses import dataclass

from decoding.constrained.kinds import Constraint


@dataclass(frozen=True)
class Preset:
    prompt: str  # sent as one user turn of the chat template
    constraint: Constraint
    max_new_tokens: int
    watch: str  # what to look at


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 30},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
DATE = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
ARITHMETIC = r"""start: term (OP term){0,3}
term: NUMBER | "(" NUMBER (OP NUMBER){1,2} ")"
OP: " + " | " - " | " * " | " / " | /[-+*\/]/
NUMBER: /0|[1-9][0-9]{0,2}/
"""

PRESETS = {
    "extract name and age as JSON": Preset(
        "Extract the person's name and age as JSON: Maria Lopez is 34 years old and lives in Madrid.",
        Constraint("json_schema", json.dumps(PERSON, indent=2)),
        48,
        "The keys and the punctuation are forced (no model call for them); the model only writes the name and the age.",
    ),
    "answer yes or no": Preset(
        "Is the Pacific the largest ocean on Earth? Answer yes or no.",
        Constraint("choices", "yes\nno"),
        8,
        "The model's favourite first token is illegal here: see how much probability the grammar throws away.",
    ),
    "a date as YYYY-MM-DD": Preset(
        "On what date did Apollo 11 land on the Moon?",
        Constraint("regex", DATE),
        16,
        "Unconstrained, the model answers in a sentence; the regex leaves it digits and dashes, month 01-12.",
    ),
    "an arithmetic expression": Preset(
        "Write an arithmetic expression that equals 12. Reply with the expression only.",
        Constraint("lark", ARITHMETIC),
        40,
        "A context-free grammar: parentheses must close, and after at most four numbers only the end is legal.",
    ),
}
DEFAULT = "extract name and age as JSON"
