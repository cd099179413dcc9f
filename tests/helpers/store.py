"""A run's entry as the session store holds it, for tests of the store's rules (a loaded trace: no model needed)."""

from decoding.trace import Trace
from ui.sessions import Entry


def entry() -> Entry:
    trace = Trace(
        model_id="m",
        model_label="m",
        device="cpu",
        dtype="float32",
        prompt="p",
        prompt_ids=[1],
        prompt_tokens=["p"],
        seed=0,
        max_new_tokens=4,
        stop_strings=[],
    )
    return Entry(trace=trace)
