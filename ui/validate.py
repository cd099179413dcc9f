"""The browser's side of checking values: controls that let any typed value reach the handler's check (gradio's own
range checks name no control), and stop strings as typed in a box. The checks themselves (a number in its range, a
choice among the allowed) are `decoding.values`; the sampler knobs' ranges are `decoding.knobs`.
"""

import re

import gradio as gr

from decoding.knobs import KNOBS
from decoding.stopping import MAX_STOP_LENGTH, MAX_STOP_STRINGS
from decoding.values import short

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def stop_strings(text) -> list[str]:
    """One stop string per line of `text`; `\\n`, `\\t`, `\\r` and `\\\\` are escapes, every other backslash is
    literal (so non-ASCII text and a trailing backslash pass as typed). Empty lines are skipped."""
    if text is None:
        return []
    if not isinstance(text, str):
        raise ValueError(f"stop strings must be text, one per line, got {short(text)}")
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


def knob_slider(*args, **kwargs) -> gr.Slider:
    """A gr.Slider whose typed value reaches the handler's check even when it is out of range.

    gr.Slider refuses a typed 5 for top-p in its own preprocessing with a bare "Value 5 is greater than maximum
    value 1." that names no control; the handler's `checked` names the control, its range and the value instead.
    (Set on the instance: a gr.Slider subclass would make gradio write a .pyi stub beside this file.)
    """
    slider = gr.Slider(*args, **kwargs)
    slider.preprocess = lambda payload: payload
    return slider


def knob(field: str, value: float, info: str, **options) -> gr.Slider:
    """A sampler knob's slider, its range, step and label those of its record (decoding.knobs.KNOBS[field])."""
    r = KNOBS[field]
    return knob_slider(r.lo, r.hi, value, step=r.step, label=r.label, info=info, **options)


def whole_number_box(value: int, **kwargs) -> gr.Number:
    """A number box for a whole number that the handler checks with `whole` (or the engine), unrounded.

    gr.Number(precision=0) rounds in gradio's own preprocessing, where NaN or infinity (an API client can send
    them) fails with a bare "Error"; unrounded, they reach the check that names the box and its range.
    """
    return gr.Number(value, precision=None, step=1, **kwargs)
