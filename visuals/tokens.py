"""How token text is shown, one rule for every figure and table.

A token's boundaries matter (" the" and "the" are different tokens), so a single token shows its leading
space as ␣, a newline as ↵, a tab as ⇥, and the empty string as ∅. Running text (a completion, a beam's path)
keeps its spaces and shows only newlines and tabs. Neither escapes HTML: the caller does, where it writes HTML.
A token that holds only some bytes of a character shows them as <0xF0>, with BYTES_NOTE beside. A bidirectional
control (a right-to-left override, an isolate) shows as its short name, ⟨RLO⟩: written as itself, an unclosed one
turned the rest of the line around it backwards (a teacher's prompt on the projector).
"""

import re

# Unicode's explicit directional embeddings, overrides and isolates (UAX #9), by their short names
BIDI_CONTROLS = {
    "\u202a": "LRE",
    "\u202b": "RLE",
    "\u202c": "PDF",
    "\u202d": "LRO",
    "\u202e": "RLO",
    "\u2066": "LRI",
    "\u2067": "RLI",
    "\u2068": "FSI",
    "\u2069": "PDI",
}
_SHOWN = str.maketrans({"\n": "↵", "\t": "⇥", **{ch: f"⟨{name}⟩" for ch, name in BIDI_CONTROLS.items()}})


def visible_text(text: str) -> str:
    """Running text on one line: newlines become ↵ and tabs ⇥, a bidirectional control its name (⟨RLO⟩); spaces
    stay spaces."""
    return text.translate(_SHOWN)


def visible_token(text: str) -> str:
    """One token with its boundaries visible: a space becomes ␣ (and newline ↵, tab ⇥); empty becomes ∅."""
    return visible_text(text.replace(" ", "␣")) or "∅"


# decoding.prompts.token_texts spells the bytes of a token that holds part of a character as <0xF0>
_BYTE = re.compile(r"<0x[0-9A-F]{2}>")
BYTES_NOTE = (
    "<0xF0> = one byte: the model writes an emoji or a CJK character in pieces, 2 to 4 bytes, one token at a time"
)


def has_bytes(texts) -> bool:
    """Whether any of these token texts is (partly) bytes of a character written in pieces."""
    return any(_BYTE.search(t) for t in texts)
