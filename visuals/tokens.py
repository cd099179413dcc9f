"""How token text is shown, one rule for every figure and table.

A token's boundaries matter (" the" and "the" are different tokens), so a single token shows its leading
space as ␣, a newline as ↵, a tab as ⇥, and the empty string as ∅. Running text (a completion, a beam's path)
keeps its spaces and shows only newlines and tabs. Neither escapes HTML: the caller does, where it writes HTML.
"""


def visible_text(text: str) -> str:
    """Running text on one line: newlines become ↵ and tabs ⇥; spaces stay spaces."""
    return text.replace("\n", "↵").replace("\t", "⇥")


def visible_token(text: str) -> str:
    """One token with its boundaries visible: a space becomes ␣ (and newline ↵, tab ⇥); empty becomes ∅."""
    return visible_text(text.replace(" ", "␣")) or "∅"
