"""Why a session's run or round is gone, one rule for every lesson (ui/alive.py, `gone`): the server restarted since the
page was opened (its requests name another boot id), the item was freed or expired (the store says so, at every ask
for a run's id), it was released, or there never was one. And the route every page asks answers the boot id."""

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from types import SimpleNamespace

import gradio as gr
import pytest
from gradio.context import LocalContext
from gradio.state_holder import SessionState
from starlette.requests import Request

from decoding.classround.round import NotTeacher
from tests.helpers.step import CONFIG
from tests.helpers.store import entry
from ui import alive, server_note
from ui.classround import handlers as round_handlers
from ui.sessions import Store

RESTARTED = "the server restarted after this page was opened"


@contextmanager
def page(boot: str | None):
    """An event from a page served by the server start `boot` (None: a client that names none), as gradio sets it for
    the thread that handles the event."""
    token = LocalContext.request.set(SimpleNamespace(headers={} if boot is None else {alive.HEADER: boot}))
    try:
        yield
    finally:
        LocalContext.request.reset(token)


def test_a_page_served_by_another_start_of_the_server_is_told_it_restarted():
    with page("0ld"):
        assert alive.page_restarted()
        assert alive.gone("run", "press Prefill to start one", had=False).startswith(RESTARTED)
    with page(alive.BOOT):
        assert not alive.page_restarted()
    with page(None):  # an API client: no page, no restart to speak of
        assert not alive.page_restarted()
    assert not alive.page_restarted()  # outside an event


def test_gradio_names_the_events_request_to_the_thread_that_handles_it():
    # page_restarted reads gradio's own context (gradio.context.LocalContext, which gradio 6.31 sets around every
    # handler it calls): this fails by its name if an upgrade stops setting it
    with gr.Blocks() as demo:
        said = gr.Textbox()
        gr.Button().click(lambda: str(alive.page_restarted()), None, said)

    def handled(boot: str) -> str:
        request = gr.Request(headers={alive.HEADER: boot})
        answer = demo.process_api(block_fn=0, inputs=[], state=SessionState(demo), request=request)
        with ThreadPoolExecutor(1) as thread:  # playwright's event loop may run in this one
            return thread.submit(asyncio.run, answer).result()["data"][0]

    assert handled("0ld") == "True" and handled(alive.BOOT) == "False"


def test_a_run_never_started_released_freed_or_lost_in_a_restart_each_says_its_own_reason():
    now = [0.0]
    store = Store(max_items=1, clock=lambda: now[0], in_use_s=60)
    with page(alive.BOOT):
        with pytest.raises(ValueError, match="^Press Prefill first: there is no run in this session yet$"):
            store.get(None)
        released = store.put(entry())
        store.release(released)
        with pytest.raises(ValueError, match="run is no longer on the server .*released.*: press Prefill"):
            store.get(released)
        freed = store.put(entry())
        now[0] += 61  # idle by now
        store.put(entry())  # a newer session's run frees it
        for _ in range(2):  # a second Step after the eviction: the same reason
            with pytest.raises(ValueError, match="run was freed after 1 idle minute to make room for other sessions"):
                store.get(freed)
    with page("0ld"), pytest.raises(ValueError, match=f"^{RESTARTED}.*: press Prefill to start one$"):
        store.get(None)  # a restart empties the page's state: its run id is gone with the run


def test_after_a_restart_a_round_page_says_so_and_the_projector_drops_the_dead_round():
    session = "a-page-from-before-the-restart"
    with page("0ld"):
        for teacher_button in (round_handlers.reveal, round_handlers.end):
            with pytest.raises(ValueError, match=f"^{RESTARTED}.*press Start a round"):
                teacher_button(session, {"code": "K7QF", "key": "its key"})
        with pytest.raises(ValueError, match=f"^{RESTARTED}.*type its code and Join"):
            round_handlers.draw(session)
        with pytest.raises(ValueError, match=f"no round WUWV on this server \\({RESTARTED}\\)"):
            round_handlers.join(session, "WUWV")  # the old code, still in the page's join box
        # the page's script asks for its view when the round's number changed: the whole view, without the round
        view = round_handlers.refresh(session).view
    assert RESTARTED in view["html"] and "classround-code" not in view["html"] and "data-code" not in view["html"]


def test_a_round_with_no_seat_for_a_page_of_this_server_is_said_as_never_started():
    with page(alive.BOOT), pytest.raises(ValueError, match="^there is no class round in this session yet"):
        round_handlers.draw("a-new-page")


def test_a_teachers_request_without_its_key_is_told_that_not_that_it_joined_as_a_student(tiny):
    from decoding.classround.round import Round
    from decoding.pipeline import SamplerSettings
    from decoding.prompts import encode_prompt

    r = Round(tiny, encode_prompt(tiny.tokenizer, "hi", chat=False), SamplerSettings(), "guess", code="K7QF", key="k")
    with pytest.raises(NotTeacher, match="carried no teacher key$"):
        r.check(None, "reveal")
    with pytest.raises(NotTeacher, match="carried a teacher key that is not this round's$"):
        r.check("not it", "reveal")


def test_the_route_every_page_asks_answers_this_server_starts_boot_id():
    scope = {"type": "http", "method": "GET", "path": server_note.ROUTE, "headers": [], "query_string": b""}
    # in a thread of its own: playwright's event loop may run in this one (tests/unit/test_server_note.py)
    with ThreadPoolExecutor(1) as thread:
        response = thread.submit(asyncio.run, server_note.route(CONFIG).endpoint(Request(scope))).result()
    assert json.loads(response.body)["boot"] == alive.BOOT


def test_the_pages_script_sends_its_boot_on_gradio_requests_and_says_each_state_in_words():
    script = server_note.head(["#step-prefill"])
    assert json.dumps(alive.BOOT) in script and alive.HEADER in script and "/gradio_api/" in script
    for words in (alive.DOWN, alive.BACK, alive.RESTARTED):
        assert json.dumps(words)[1:-1] in script
    assert 'role", "status"' in script.replace("'", '"') and "aria-live" in script
    assert f"AbortSignal.timeout({alive.TIMEOUT_MS})" in script and alive.EVERY_MS + alive.TIMEOUT_MS < 5000
