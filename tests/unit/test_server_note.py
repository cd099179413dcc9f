"""The note on every page while long work holds the model alone comes from a plain route the page asks every few
seconds (ui/server_note.py), not a gradio event: the route answers the server's note as HTML, and the page's script
names the route and every lesson's main button."""

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor

from starlette.requests import Request

from tests.helpers.step import CONFIG
from ui import server_note
from ui.context import scheduler_for


def asked() -> str:
    """The route's answer, as the page's script reads it."""
    scope = {"type": "http", "method": "GET", "path": server_note.ROUTE, "headers": [], "query_string": b""}
    # in a thread of its own: a browser test earlier in the same worker leaves playwright's event loop running here
    with ThreadPoolExecutor(1) as thread:
        response = thread.submit(asyncio.run, server_note.route(CONFIG).endpoint(Request(scope))).result()
    return json.loads(response.body)["html"]


def test_the_route_answers_nothing_while_nothing_holds_the_model_and_the_note_while_something_does(tiny):
    assert asked() == ""
    held, release = threading.Event(), threading.Event()

    def measurement():
        with scheduler_for(tiny).turns.turn("a timing measurement", exclusive=True, eta_s=30):
            held.set()
            release.wait(10)

    worker = threading.Thread(target=measurement)
    worker.start()
    held.wait(10)
    try:
        note = asked()
    finally:
        release.set()
        worker.join(10)
    assert "<strong>Please wait: a timing measurement is running for everyone on this server" in note


def test_the_pages_script_asks_the_route_and_marks_each_lessons_main_button():
    script = server_note.head(["#step-prefill", "#timing-measure"])
    assert server_note.ROUTE in script and '["#step-prefill", "#timing-measure"]' in script
    assert "visibilityState" in script  # a page in a hidden browser tab does not ask
