"""ui/events.py: every model event goes through one queue, its ValueErrors reach the browser as gr.Error, gradio
still hands it the request and the progress bar, and Cancel stops only its own session's work."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import gradio as gr
import pytest
from gradio.helpers import special_args

from decoding.watch import Cancelled
from ui.events import (
    BATCHING,
    CONCURRENT_MODEL_EVENTS,
    MODEL_EVENT,
    MODEL_QUEUE,
    CancelFlags,
    model_event,
    paced,
    teach,
)

PROGRESS = gr.Progress()


class Session:
    def __init__(self, session_hash: str):
        self.session_hash = session_hash


def bad(value):
    raise ValueError(f"top-k must be a whole number in [0, 5], got {value!r}")


def test_teach_turns_a_value_error_into_a_browser_message():
    with pytest.raises(gr.Error) as info:
        teach(bad)(7)
    assert info.value.message == "top-k must be a whole number in [0, 5], got 7"


def test_teach_passes_a_gr_error_on_unchanged_and_keeps_a_generator_a_generator():
    def steps():
        yield 1
        raise gr.Error("no quotes around me")

    taught = teach(steps)
    assert next(taught()) == 1
    with pytest.raises(gr.Error) as info:
        list(taught())
    assert info.value.message == "no quotes around me"


def awaited(coroutine):
    """The coroutine's result, run on a loop of its own thread: a browser test before this one may have left
    playwright's loop running in this thread, where asyncio.run refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_a_runs_end_that_draws_nothing_still_answers_every_output_gradio_expects():
    """A streamed run ends on END, answered {} by its tab (ui.running): gradio refuses an empty dict as too few
    outputs (the run would end in an error), so the taught answer names the message line, and gradio accepts it."""
    with gr.Blocks() as demo:
        chart, message = gr.Markdown(), gr.HTML()
        button = gr.Button()

        def run():
            yield {chart: "step 1"}
            yield {}

        button.click(teach(run, message), None, [chart, message])
    *_, end = teach(run, message)()
    assert end == {message: ""}
    fn = next(iter(demo.fns.values()))
    drawn = awaited(demo.postprocess_data(fn, end, None))
    assert len(drawn) == 2 and drawn[1] == "" and drawn[0]["__type__"] == "update" and "value" not in drawn[0]
    with pytest.raises(ValueError, match="didn.t return enough output values"):
        awaited(demo.postprocess_data(fn, {}, None))


def model_events(demo: gr.Blocks) -> list:
    return [fn for fn in demo.fns.values() if fn.concurrency_id == MODEL_QUEUE]


def test_model_events_share_one_queue_and_its_concurrency():
    with gr.Blocks() as demo:
        box, out, button = gr.Number(), gr.Number(), gr.Button()
        model_event(button.click, lambda x: x, box, out)
        model_event([box.submit, button.click], lambda x: x, box, out, trigger_mode="always_last")
        button.click(lambda x: x, box, out)  # not a model event: its own queue
    queued = model_events(demo)
    assert len(queued) == 2 and len(demo.fns) == 3
    # many at once with the scheduler (it batches their steps; other model work takes turns), one on ZeroGPU
    assert all(fn.concurrency_limit == MODEL_EVENT["concurrency_limit"] == CONCURRENT_MODEL_EVENTS for fn in queued)
    assert (64 if BATCHING else 1) == CONCURRENT_MODEL_EVENTS


def test_a_direct_model_event_skips_gradios_queue_while_batching_and_a_streamed_run_cannot_be_direct():
    with gr.Blocks() as demo:
        box, out, button = gr.Number(), gr.Number(), gr.Button()
        model_event(button.click, lambda x: x, box, out, direct=True)

        def run(x):
            yield x

        with pytest.raises(ValueError, match="run streams its answers"):
            model_event(button.click, run, box, out, direct=True)
    (fn,) = model_events(demo)
    # the page posts it to its /run/ route; an API client's post to the queue still waits in the model's queue
    assert fn.queue is (not BATCHING) and fn.concurrency_limit == CONCURRENT_MODEL_EVENTS


def test_a_model_event_teaches_and_still_gets_the_request_and_the_progress_bar():
    def run(plan, progress=PROGRESS, request: gr.Request = None):
        return plan if plan == "quick" else bad(plan)

    with gr.Blocks() as demo:
        plan, out, button = gr.Textbox(), gr.Textbox(), gr.Button()
        model_event(button.click, run, plan, out)
    handler = model_events(demo)[0].fn
    request = gr.Request(username="someone")
    inputs, progress_index, _, _ = special_args(handler, ["quick"], request)
    assert inputs[0] == "quick" and progress_index == 1 and inputs[2] is request
    with pytest.raises(gr.Error, match="got 'fast'"):
        handler("fast")


def test_cancel_stops_only_its_own_session_and_a_new_run_starts_clear():
    flags = CancelFlags()
    mine, theirs = flags.watch(Session("a"), lambda *a, **k: None), flags.watch(Session("b"), lambda *a, **k: None)
    flags.cancel(Session("a"))
    with pytest.raises(Cancelled):
        mine.check()
    theirs.check()  # the other session's work goes on
    flags.watch(Session("a"), lambda *a, **k: None).check()  # pressing Run again starts with the flag cleared


def test_the_watch_reports_to_the_progress_bar():
    seen = []
    watch = CancelFlags().watch(None, lambda fraction, desc: seen.append((fraction, desc)))
    watch.on_progress(0.5, "half way")
    assert seen == [(0.5, "half way")]


def test_a_long_run_redraws_its_progress_bar_at_most_four_times_a_second():
    now, seen = [0.0], []
    report = paced(lambda fraction, desc: seen.append((fraction, desc)), every_s=0.25, clock=lambda: now[0])
    for token in range(30):  # thirty tokens, 40 ms apart: 1.2 s
        report(token / 30, desc=f"token {token + 1}")
        now[0] += 0.04
    # the first at once, then one every 0.25 s of the run: at 0, 0.28, 0.56, 0.84 and 1.12 s
    assert [desc for _, desc in seen] == ["token 1", "token 8", "token 15", "token 22", "token 29"]


def test_a_cancel_keeps_when_it_reached_the_server_for_the_message_that_says_how_soon_the_work_ended():
    flags = CancelFlags()
    assert flags.since_pressed(None) is None  # never pressed: the message says no time
    flags.cancel(None)
    took = flags.since_pressed(None)
    assert took is not None and took >= 0
    assert not flags.watch(None, lambda *a, **k: None).should_stop()  # a new piece of work starts unstopped
