"""Values from outside (a browser, a shared link, a command line), checked before they reach the engine.

A slider or number box usually sends a float, but a cleared box sends None, an API client can send a string, NaN or
infinity, and a link carries text. Each helper returns a clean Python value or raises a ValueError that names the
control, the value it got and the allowed range. `real` and `integral` only convert what is clearly a number and pass
anything else through unchanged, so the engine's own check names it.
"""

import math


def parse(value) -> float | None:
    """A finite float for a number or a numeric string; None for anything else (bool, NaN, inf, text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def real(value):
    """`value` as a float when it is a finite number (or numeric text); otherwise unchanged, for the engine to name."""
    parsed = parse(value)
    return value if parsed is None else parsed


def integral(value):
    """`value` as an int when it is a finite whole number (3, 3.0, "3"); otherwise unchanged, for the engine to name."""
    parsed = parse(value)
    return int(parsed) if parsed is not None and parsed == int(parsed) else value


def whole(name: str, value, lo: int, hi: int, note: str = "") -> int:
    """A whole number in [lo, hi], or a ValueError naming `name`, the range and what came instead."""
    parsed = parse(value)
    if parsed is None or parsed != int(parsed) or not lo <= parsed <= hi:
        extra = f" ({note})" if note else ""
        raise ValueError(f"{name} must be a whole number in [{lo}, {hi}]{extra}, got {short(value)}")
    return int(parsed)


def number(name: str, value, lo: float, hi: float, allowed: str) -> float:
    """A finite number in [lo, hi], or a ValueError naming `name`, the range in words (`allowed`) and what came."""
    return checked(name, value, lambda x: lo <= x <= hi, allowed)


def checked(label: str, value, ok, allowed: str) -> float:
    """`value` as a float when it is a finite number that `ok` accepts, or a ValueError naming the control by its
    label on the page, the allowed values in words (`allowed`) and what came."""
    parsed = parse(value)
    if parsed is None or not ok(parsed):
        raise ValueError(f"{label} must be {allowed}, got {short(value)}")
    return parsed


def choice(name: str, value, allowed) -> str:
    if value not in tuple(allowed):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {short(value)}")
    return value


def picked(name: str, values, allowed) -> list:
    """The ticked boxes of a checkbox group: at least one, each one of `allowed`; or a ValueError naming `name`."""
    values = list(values or [])
    if not values or any(v not in allowed for v in values):
        raise ValueError(f"{name}: tick at least one of {', '.join(map(str, allowed))}, got {short(values)}")
    return values


def short(value, limit: int = 60) -> str:
    """What came, as a student reads it: a cleared box (None or blank text) and nothing ticked in words, anything else
    as repr(value), cut so a pasted novel does not fill the error message."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "an empty box"
    if isinstance(value, (list, tuple)) and not value:
        return "nothing ticked"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"
