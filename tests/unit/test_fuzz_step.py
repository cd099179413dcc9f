"""Hypothesis drives the step tab's handlers like a classroom would: random settings (NaN, None, text, out of
range), random prompts (emoji, right-to-left, control characters, lone surrogates), then a few random actions.
Nothing raises but gr.Error, and after every action the run is consistent: one record per step, token ids in
the vocabulary, the shown probabilities summing to at most 1."""

import gradio as gr
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from decoding.models import TINY
from tests.helpers.step_knobs import page
from ui.context import CHAT, RAW, AppConfig
from ui.events import teach
from ui.sessions import STORE
from ui.step import handlers as h

CONFIG = AppConfig(model_id=TINY, device="cpu")
VOCAB = 259

ANYTHING = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-10, 10**6),
    st.text(max_size=4),
    st.booleans(),
)


def mostly(valid, bad=ANYTHING):
    """Nine draws in ten from `valid`, the tenth from `bad`, so some runs get far and some fail early."""
    return st.integers(0, 9).flatmap(lambda i: bad if i == 9 else valid)


KNOBS = st.fixed_dictionaries(
    {
        "temperature": mostly(st.one_of(st.just(0.0), st.floats(0.05, 3))),
        "top_k": mostly(st.integers(0, VOCAB)),  # the tenth draw may exceed the vocabulary
        "top_p": mostly(st.floats(0.01, 1)),
        "min_p": mostly(st.floats(0, 0.99)),
        "repetition_penalty": mostly(st.floats(0.5, 2)),
        "presence_penalty": mostly(st.floats(-2, 2)),
        "frequency_penalty": mostly(st.floats(-2, 2)),
        "order": mostly(st.sampled_from(["transformers", "vllm", "llama.cpp"])),
    }
)
SPECIAL = ["😀", "👩\u200d👩\u200d👧", "🇫🇷", "ש", "ل", "\u202e", "\u200f", "\x00", "\x07", "\x1b", "\r", "\n", "\t"]
SPECIAL += ["\ud800", "\udfff", "e\u0301", " ", "中", "\\"]
# pieces, not characters: an emoji family or a flag is several code points
PIECES = st.one_of(st.characters(), st.sampled_from(SPECIAL))
PROMPT = mostly(st.lists(PIECES, min_size=1, max_size=40).map("".join), st.sampled_from(["", " \n", "a" * 600, None]))
STOPS = mostly(st.one_of(st.just(""), st.lists(PIECES, min_size=1, max_size=12).map("".join)))
ACTION = st.one_of(
    st.tuples(st.just("step"), KNOBS),
    st.tuples(st.just("back"), KNOBS),
    st.tuples(st.just("preview"), KNOBS),
    st.tuples(st.just("force"), mostly(st.integers(0, VOCAB - 1)), KNOBS),
    st.tuples(st.just("run_n"), mostly(st.integers(1, 3)), KNOBS),
)


def act(run_id, action) -> None:
    name, *args, knobs = action
    box = page(knobs)
    if name == "step":
        teach(h.step)(run_id, box)
    elif name == "back":
        teach(h.back)(run_id, box)
    elif name == "preview":
        teach(h.settings_changed)(run_id, box, knobs)
    elif name == "force":
        teach(h.force)(run_id, args[0], box)
    else:
        list(teach(h.run_steps)(run_id, args[0], box))


def assert_consistent(run_id) -> None:
    entry = STORE.get(run_id)
    steps = entry.trace.steps
    assert len(entry.view.records) == len(steps)
    assert all(0 <= s.token_id < VOCAB for s in steps)
    if entry.view.shown is not None:
        assert sum(c.prob_after for c in entry.view.shown.top) <= 1 + 1e-4


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=mostly(st.just(TINY)),
    message=PROMPT,
    template=st.sampled_from([RAW, CHAT]),
    seed=mostly(st.integers(0, 2**32 - 1)),
    max_new=mostly(st.integers(1, 8)),
    stops=STOPS,
    knobs=KNOBS,
    actions=st.lists(ACTION, max_size=4),
)
def test_step_handlers_raise_nothing_but_gr_error(tiny, model, message, template, seed, max_new, stops, knobs, actions):
    if model is not None and model != TINY and isinstance(model, str):
        model = f"not-a-model:{model}"  # never a real hub id: this test must not reach for the network
    try:
        run_id = teach(h.prefill)(CONFIG, None, model, message, template, seed, max_new, stops, page(knobs)).run_id
    except gr.Error as err:
        assert err.message
        event(f"prefill refused: {err.message[:25]}")
        return
    event("prefill ran")
    try:
        for action in actions:
            try:
                act(run_id, action)
            except gr.Error as err:
                assert err.message
                event(f"{action[0]} refused")
            assert_consistent(run_id)
    finally:
        STORE.release(run_id)
