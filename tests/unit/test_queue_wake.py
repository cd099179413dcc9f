"""ui.kit.queue_wake: gradio's queue loops sleep until there is work, and events still run, alone and waiting for a
slot."""

import threading
import time

import gradio as gr
import pytest
from gradio import queueing, state_holder
from gradio_client import Client

from app import queued
from ui import kit
from ui.kit import queue_wake
from ui.launch import free_port


@pytest.fixture
def served(monkeypatch):
    """A two-event app on the app's queue and kit, and a count of its looks for work (gradio's loop asks the queue's
    length at each turn)."""
    looks = []
    length = queueing.Queue.__len__
    monkeypatch.setattr(queueing.Queue, "__len__", lambda queue: looks.append(1) or length(queue))
    with gr.Blocks() as demo:
        box = gr.Number()
        gr.Button().click(lambda x: x + 1, box, box, api_name="plus", concurrency_limit=1)
        gr.Button().click(lambda x: time.sleep(0.2) or x * 2, box, box, api_name="slow", concurrency_limit=1)
    monkeypatch.setattr(state_holder, "SessionState", state_holder.SessionState)  # put back after the test
    port = free_port()
    app, _, _ = queued(demo).launch(server_port=port, prevent_thread_lock=True, quiet=True)
    kit.install(demo, app)
    try:
        yield Client(f"http://127.0.0.1:{port}/", verbose=False), looks
    finally:
        demo.close()


def test_the_queue_polls_no_more_while_idle(served):
    _, looks = served
    time.sleep(0.5)  # the server is up and idle
    before = len(looks)
    time.sleep(2.0)
    # polling every 5 ms, gradio's loop looked 400 times here; woken by work, once a second (IDLE_CAP_S), asking the
    # length twice each time (its own look, and whether the queue is idle)
    assert 0 < len(looks) - before <= 2 * (2.0 / queue_wake.IDLE_CAP_S + 1)


def test_events_run_alone_and_when_they_wait_for_a_free_slot(served):
    client, _ = served
    assert client.predict(1, api_name="/plus") == 2
    results = {}

    def call(i):
        results[i] = client.predict(i, api_name="/slow")

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]  # one slot: three wait for it in turn
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == {i: 2 * i for i in range(4)}
    assert client.predict(5, api_name="/plus") == 6
