"""Values from the browser, checked at the edge before they reach the engine.

A slider or number box usually sends a float, but a cleared box sends None, an API client can send a string,
NaN or infinity, and a pasted stop-string list can hold anything. Each helper returns a clean Python value or
raises a ValueError that names the control, the value it got and the allowed range; `ui.events.teach` turns
that into a gr.Error. Every tab checks its controls with these helpers. Ranges the engine already checks
(temperature, top-p, penalties, max new tokens) stay there, written once: `real` and `integral` only convert
what is clearly a number and pass anything else through unchanged, so the engine's own message names it.
"""

import math
import re

import gradio as gr

from decoding.stopping import MAX_STOP_LENGTH, MAX_STOP_STRINGS

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def _parse(value):
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
    parsed = _parse(value)
    return value if parsed is None else parsed


def integral(value):
    """`value` as an int when it is a finite whole number (3, 3.0, "3"); otherwise unchanged, for the engine to name."""
    parsed = _parse(value)
    return int(parsed) if parsed is not None and parsed == int(parsed) else value


def whole(name: str, value, lo: int, hi: int, note: str = "") -> int:
    """A whole number in [lo, hi], or a ValueError naming `name`, the range and what came instead."""
    parsed = _parse(value)
    if parsed is None or parsed != int(parsed) or not lo <= parsed <= hi:
        extra = f" ({note})" if note else ""
        raise ValueError(f"{name} must be a whole number in [{lo}, {hi}]{extra}, got {_short(value)}")
    return int(parsed)


def number(name: str, value, lo: float, hi: float, allowed: str) -> float:
    """A finite number in [lo, hi], or a ValueError naming `name`, the range in words (`allowed`) and what came."""
    parsed = _parse(value)
    if parsed is None or not lo <= parsed <= hi:
        raise ValueError(f"{name} must be {allowed}, got {_short(value)}")
    return parsed


def picked(name: str, values, allowed) -> list:
    """The ticked boxes of a checkbox group: at least one, each one of `allowed`; or a ValueError naming `name`."""
    values = list(values or [])
    if not values or any(v not in allowed for v in values):
        raise ValueError(f"{name}: tick at least one of {', '.join(map(str, allowed))}, got {_short(values)}")
    return values


def choice(name: str, value, allowed) -> str:
    if value not in tuple(allowed):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {_short(value)}")
    return value


def stop_strings(text) -> list[str]:
    """One stop string per line of `text`; `\\n`, `\\t`, `\\r` and `\\\\` are escapes, every other backslash is
    literal (so non-ASCII text and a trailing backslash pass as typed). Empty lines are skipped."""
    if text is None:
        return []
    if not isinstance(text, str):
        raise ValueError(f"stop strings must be text, one per line, got {_short(text)}")
    lines = [line for line in text.splitlines() if line]
    if len(lines) > MAX_STOP_STRINGS:
        raise ValueError(f"at most {MAX_STOP_STRINGS} stop strings (one per line), got {len(lines):,}")
    stops = []
    for n, line in enumerate(lines, 1):
        stop = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[0]), line)
        if len(stop) > MAX_STOP_LENGTH:
            raise ValueError(f"stop string {n} has {len(stop):,} characters; each may have 1 to {MAX_STOP_LENGTH}")
        bad = next((c for c in stop if 0xD800 <= ord(c) <= 0xDFFF), None)
        if bad is not None:
            # generated text never contains a lone surrogate, so such a stop string could never match
            raise ValueError(f"stop string {n} contains a lone surrogate (U+{ord(bad):04X}), which no text can match")
        stops.append(stop)
    return stops


def _short(value, limit: int = 60) -> str:
    """repr(value), cut so a pasted novel does not fill the error message."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def checked(label: str, value, ok, allowed: str) -> float:
    """`value` as a float when it is a finite number that `ok` accepts, or a ValueError naming the control by its
    label on the page, the allowed values in words (`allowed`) and what came."""
    parsed = _parse(value)
    if parsed is None or not ok(parsed):
        raise ValueError(f"{label} must be {allowed}, got {_short(value)}")
    return parsed


def knob_slider(*args, **kwargs) -> gr.Slider:
    """A gr.Slider whose typed value reaches the handler's check even when it is out of range.

    gr.Slider refuses a typed 5 for top-p in its own preprocessing with a bare "Value 5 is greater than maximum
    value 1." that names no control; the handler's `checked` names the control, its range and the value instead.
    (Set on the instance: a gr.Slider subclass would make gradio write a .pyi stub beside this file.)
    """
    slider = gr.Slider(*args, **kwargs)
    slider.preprocess = lambda payload: payload
    return slider


def whole_number_box(value: int, **kwargs) -> gr.Number:
    """A number box for a whole number that the handler checks with `whole` (or the engine), unrounded.

    gr.Number(precision=0) rounds in gradio's own preprocessing, where NaN or infinity (an API client can send
    them) fails with a bare "Error"; unrounded, they reach the check that names the box and its range.
    """
    return gr.Number(value, precision=None, step=1, **kwargs)
