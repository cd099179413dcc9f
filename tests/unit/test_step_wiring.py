"""How the Step tab's clicks reach the server: a click answered once skips gradio's queue (the page posts it and
reads the answer from the same request, ui/events.py), while a run that streams its views keeps the queue, where
Stop can cancel it."""

import gradio as gr

from tests.helpers.step import CONFIG
from ui.events import BATCHING, MODEL_QUEUE
from ui.step import tab

ANSWERED_ONCE = {"prefill", "step", "back", "force", "settings_changed", "lens_opened", "strategies_drawn"}
STREAMED = {"run_steps", "run_to_end"}


def test_the_step_tabs_clicks_skip_the_queue_and_its_streamed_runs_keep_it():
    with gr.Blocks() as demo:
        tab.build(CONFIG)
    model = {fn.name: fn for fn in demo.fns.values() if fn.concurrency_id == MODEL_QUEUE}
    assert set(model) >= ANSWERED_ONCE | STREAMED
    assert all(model[name].queue is (not BATCHING) for name in ANSWERED_ONCE)
    assert all(model[name].queue for name in STREAMED)
