"""The step tab's handlers on the tiny model: settings apply from the next step, Back trims, forcing branches,
a saved trace replays without a model, and bad values reach the browser as messages naming the range."""

import gradio as gr
import pytest

from decoding.models import TINY
from decoding.serving.passes import Pass
from tests.step_knobs import CONFIG, KNOBS
from ui.context import RAW
from ui.events import teach
from ui.sessions import STORE
from ui.step import handlers as h
from visuals.distribution import MODES


def start(knobs=KNOBS, max_new=6):
    return h.prefill(CONFIG, None, TINY, "hello", RAW, 0, max_new, "", MODES[0], knobs).run_id


def test_step_then_back_returns_to_the_same_tokens(tiny):
    run_id = start()
    h.step(run_id, MODES[0], KNOBS)
    h.step(run_id, MODES[0], KNOBS)
    first = list(STORE.get(run_id).trace.token_ids)
    h.back(run_id, MODES[0], KNOBS)
    assert STORE.get(run_id).trace.token_ids == first[:1]
    h.step(run_id, MODES[0], KNOBS)
    assert STORE.get(run_id).trace.token_ids == first  # the seeded draw is replayed


def test_settings_apply_from_the_next_step(tiny):
    run_id = start()
    h.step(run_id, MODES[0], KNOBS)
    greedy = {**KNOBS, "temperature": 0.0}
    h.step(run_id, MODES[0], greedy)
    steps = STORE.get(run_id).trace.steps
    assert steps[0].settings["temperature"] == 1.0 and steps[1].settings["temperature"] == 0.0


def test_forcing_on_a_chosen_step_replaces_that_choice(tiny):
    run_id = start()
    h.step(run_id, MODES[0], KNOBS)
    h.force(run_id, 65, MODES[0], KNOBS)
    steps = STORE.get(run_id).trace.steps
    assert len(steps) == 1 and steps[0].token_id == 65 and steps[0].forced


def test_a_saved_trace_replays_without_a_model(tiny):
    run_id = start()
    for _ in h.run_to_end(run_id, MODES[0], KNOBS):
        pass
    json_path, csv_path = h.save_trace(run_id)
    replay_id = h.load_trace(None, json_path, MODES[0], "transformers").run_id
    entry = STORE.get(replay_id)
    assert entry.run is None and entry.trace.token_ids == STORE.get(run_id).trace.token_ids
    h.back(replay_id, MODES[0], KNOBS)
    assert entry.view.cursor == len(entry.trace.steps) - 1
    with open(csv_path) as f:
        assert f.read().startswith("index,")


@pytest.mark.parametrize(
    "knobs, message",
    [
        ({**KNOBS, "temperature": -1.0}, r"Temperature must be 0 \(greedy\) or between 0.01 and 3, got -1.0"),
        ({**KNOBS, "top_k": 2.5}, r"Top-k must be a whole number in \[0, 200\]"),
        ({**KNOBS, "top_p": 5}, r"Top-p must be between 0.01 and 1 \(1 = off\), got 5"),
    ],
)
def test_bad_values_become_messages_naming_the_range(tiny, knobs, message):
    with pytest.raises(gr.Error, match=message):
        teach(h.prefill)(CONFIG, None, TINY, "hello", RAW, 0, 6, "", MODES[0], knobs)


def test_max_new_tokens_out_of_range_is_refused(tiny):
    with pytest.raises(gr.Error, match=r"Max new tokens must be a whole number in \[1, 4096\], got 0"):
        teach(h.prefill)(CONFIG, None, TINY, "hello", RAW, 0, 0, "", MODES[0], KNOBS)


def test_step_without_a_run_says_to_prefill():
    with pytest.raises(gr.Error, match="press Prefill"):
        teach(h.step)("no-such-run", MODES[0], KNOBS)


@pytest.mark.parametrize("before", [Pass(ms=1.0, rows=2, mode="packed"), Pass(ms=1.0, rows=1, mode="solo")])
def test_run_my_steps_alone_takes_effect_on_the_very_next_step(tiny, before):
    """Whether the shown distribution came from a shared pass or from a tick that happened to hold only this session,
    the Step after the tick says "alone, as you asked": its choice comes from a pass that was kept alone."""
    run_id = start()
    h.step(run_id, MODES[0], KNOBS)
    run = STORE.get(run_id).run
    if run.scheduler is None:
        pytest.skip("this server runs without the shared scheduler: every pass is its own")
    run.last_pass = before  # the pass behind the distribution on screen
    h.set_alone(run_id, True)
    h.step(run_id, MODES[0], KNOBS)
    step = STORE.get(run_id).trace.steps[-1]
    assert step.pass_mode == "alone" and step.rows == 1  # this step's choice came from a pass of its own
