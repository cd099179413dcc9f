"""The Sampler sandbox tab's handler: the knobs go through the one settings builder, and a bad value is said in the
tab's message line, naming the control, while the charts keep what they show."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import gradio as gr
import pytest

from ui.sandbox import tab as sandbox_tab
from ui.sandbox.tab import sandbox_view

KNOBS = {"temperature": 1.0, "top_k": 0, "top_p": 0.9, "min_p": 0.1}


def test_sandbox_view_builds_every_output():
    view = sandbox_view("10, 9.9, 9.8, 5, 4, 0 x 95", KNOBS)
    assert view.strategies.count('<div class="lc-panel">') == 5 and "top-p 0.9" in view.measured
    assert "transformers" in view.orders


@pytest.mark.parametrize(
    "text, knobs, message",
    [
        ("1, x", {}, "logits: entry 2 ('x') is not a number"),
        ("1, 2", {"temperature": 7.0}, "Temperature must be 0 (greedy) or between 0.01 and 3, got 7.0"),
        ("1, 2", {"top_k": 2.5}, "Top-k must be a whole number"),
        ("1, 2", {"top_k": 500}, "Top-k must be a whole number in [0, 200] (0 = off), got 500"),
        ("1, 2", {"top_p": 0.0}, "Top-p must be between 0.01 and 1"),
        ("1, 2", {"min_p": None}, "Min-p must be between 0 and 0.99 (0 = off), got an empty box"),
    ],
)
def test_sandbox_view_errors_name_the_control_the_value_and_the_range(text, knobs, message):
    with pytest.raises(ValueError) as err:
        sandbox_view(text, {**KNOBS, **knobs})
    assert message in str(err.value)


def test_a_bad_value_goes_to_the_message_line_and_every_chart_keeps_its_own():
    with gr.Blocks() as demo:
        page = sandbox_tab.layout(None)
        sandbox_tab.wire(page, None)
    # the event every knob's change fires: it reads the logits and the four knobs, and writes the view and message
    event = next(fn for fn in demo.fns.values() if page.knobs.temperature in fn.inputs and page.message in fn.outputs)
    given = {page.logits: "1, 2", **{getattr(page.knobs, k): v for k, v in KNOBS.items()}}

    def answer(**knobs) -> dict:
        values = {**given, **{getattr(page.knobs, k): v for k, v in knobs.items()}}
        call = demo.process_api(block_fn=event, inputs=[values[c] for c in event.inputs], state=None)
        # a loop of its own in a thread: the browser tests' sync playwright keeps one running in this thread
        with ThreadPoolExecutor(1) as pool:
            out = pool.submit(asyncio.run, call).result()
        return dict(zip(event.outputs, out["data"]))

    bad = answer(top_p=5)
    assert "Top-p must be between 0.01 and 1 (1 = off), got 5" in bad[page.message]
    # every chart, the sentence and the table are left as they are: no Error badge on them
    assert all(bad[c]["__type__"] == "update" and "value" not in bad[c] for c in page.view)
    good = answer(top_p=0.5)
    assert good[page.message] == "" and "top-p 0.9" in good[page.view.measured]
