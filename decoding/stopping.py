"""When to stop, and what text to show while deciding.

Three conditions: an end-of-sequence id (for chat prompts, the template's end-of-turn token),
`max_new_tokens`, and stop strings. Stop strings are matched on decoded text, so they can span token
boundaries. Text that could still be the start of a stop string is held back from the stream until
the next tokens decide it: released if it turns out not to be one, dropped if it is.
"""

from dataclasses import dataclass

EOS, MAX_TOKENS, STOP_STRING = "eos", "max_new_tokens", "stop_sequence"
MAX_STOP_STRINGS = 16
MAX_STOP_LENGTH = 200


def check_stop_strings(stop_strings) -> tuple[str, ...]:
    stops = tuple(stop_strings or ())
    if len(stops) > MAX_STOP_STRINGS:
        raise ValueError(f"at most {MAX_STOP_STRINGS} stop strings, got {len(stops)}")
    for s in stops:
        if not isinstance(s, str) or not s or len(s) > MAX_STOP_LENGTH:
            raise ValueError(f"each stop string must be 1 to {MAX_STOP_LENGTH} characters, got {s!r}")
    return stops


@dataclass(frozen=True)
class TextState:
    """What the stream shows: `visible` is final, `held` may still turn out to start a stop string."""

    visible: str
    held: str
    hit: str | None  # the stop string found, if any


def split_text(text: str, stop_strings: tuple[str, ...]) -> TextState:
    """Cut `text` at the first stop string, or hold back the longest tail that could begin one."""
    hits = [(text.find(s), s) for s in stop_strings if s in text]
    if hits:
        at, stop = min(hits)
        return TextState(text[:at], "", stop)
    held = max((_overlap(text, s) for s in stop_strings), default=0)
    # an unfinished multi-byte character decodes as U+FFFD: hold it until its bytes arrive
    while held < len(text) and text[len(text) - held - 1] == "\ufffd":
        held += 1
    return TextState(text[: len(text) - held], text[len(text) - held :], None)


def _overlap(text: str, stop: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `stop`."""
    for n in range(min(len(text), len(stop) - 1), 0, -1):
        if text.endswith(stop[:n]):
            return n
    return 0


def stop_reason(token_id: int, n_generated: int, text: TextState | None, eos_ids, max_new_tokens: int) -> str | None:
    """Why a run stops after `token_id`, or None: an end-of-sequence id, then a stop string found in `text` (None for
    a run that matches no stop strings), then the limit of new tokens."""
    if token_id in eos_ids:
        return EOS
    if text is not None and text.hit is not None:
        return STOP_STRING
    if n_generated >= max_new_tokens:
        return MAX_TOKENS
    return None
