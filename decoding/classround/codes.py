"""A round's two secrets of different strength: its code, short enough to read off a projector and type on a phone
(anyone in the room may join with it), and its teacher key, which never leaves the teacher's page (whoever holds it
may advance, change and end the round)."""

import secrets
from collections.abc import Callable

from decoding.values import short

# no 0/O, 1/I/L, 5/S, 8/B: a code read from the back of a room is typed right
ALPHABET = "ACDEFGHJKMNPQRTUVWXY234679"
LENGTH = 4  # 26^4, about 457,000 codes: a server holds a few rounds at a time


def new_code(taken: Callable[[str], bool], tries: int = 100) -> str:
    """A code no live round has (`taken(code)` says whether one does)."""
    for _ in range(tries):
        code = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
        if not taken(code):
            return code
    raise ValueError(f"no free round code in {tries} tries: the server holds too many rounds, end some first")


def new_key() -> str:
    return secrets.token_urlsafe(16)


def normal_code(text) -> str:
    """A code as a student types it ("k7qf ", "K-7QF") as the round knows it, or a ValueError that says what a code
    looks like."""
    code = "".join(ch for ch in str(text or "").upper() if ch.isalnum())
    if len(code) != LENGTH or any(ch not in ALPHABET for ch in code):
        raise ValueError(
            f"a round's code is {LENGTH} letters and digits, as the projector shows it; got {short(text, 16)}"
        )
    return code
