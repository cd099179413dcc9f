"""How a count reads: "1 token", "2 tokens", "1,024 tokens". One rule for every caption and status line."""


def count(n: int, word: str, plural: str | None = None) -> str:
    """`n` and the noun that agrees with it (`plural` where adding "s" is wrong: "1 student is", "2 students are")."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"
