"""ui/kit/direct_route.py: the route for the events that skip gradio's queue answers as gradio's own /run/ route does
(the answer, the session's state, an error, a body that does not fit), and stands aside where the app has a login."""

import gradio as gr
import httpx
import pytest
from gradio import state_holder
from starlette.routing import Match

from ui import kit
from ui.kit import direct_route
from ui.launch import free_port


def counter_app() -> gr.Blocks:
    with gr.Blocks() as demo:
        count, shown, button = gr.State(0), gr.Number(), gr.Button()

        def add(n, by):
            if by < 0:
                raise ValueError(f"by must be at least 0, got {by}")
            return n + by, n + by

        button.click(add, [count, shown], [count, shown], queue=False, api_name="add")
    return demo


@pytest.fixture
def served():
    """The app launched, the direct route before gradio's: its URL for the direct route, and gradio's own (the path
    with a trailing slash, which only gradio's route takes)."""
    demo = counter_app()
    port = free_port()
    app, _, _ = demo.launch(server_port=port, prevent_thread_lock=True, quiet=True)
    route = direct_route.route(app)
    app.router.routes.insert(0, route)
    base = f"http://127.0.0.1:{port}/gradio_api/run/add"
    assert route.matches({"type": "http", "path": "/gradio_api/run/add", "method": "POST"})[0] == Match.FULL
    assert route.matches({"type": "http", "path": "/gradio_api/run/add/", "method": "POST"})[0] == Match.NONE
    yield base, base + "/"
    demo.close()


def post(url: str, by, session: str) -> httpx.Response:
    return httpx.post(url, json={"data": [None, by], "fn_index": 0, "session_hash": session}, timeout=30)


def test_the_direct_route_answers_as_gradios_own_and_keeps_each_sessions_state(served):
    direct, gradios = served
    first, again = post(direct, 2, "one"), post(direct, 3, "one")
    theirs = post(gradios, 2, "two")
    assert first.status_code == again.status_code == theirs.status_code == 200
    assert first.json()["data"] == theirs.json()["data"] == [None, 2]  # the State stays on the server
    assert again.json()["data"] == [None, 5]  # this session's count, not the other one's
    assert post(direct, 1, "two").json()["data"] == [None, 3]


def test_an_error_and_a_body_that_does_not_fit_are_answered_as_gradio_answers_them(served):
    direct, gradios = served
    mine, theirs = post(direct, -1, "one"), post(gradios, -1, "one")
    assert mine.status_code == theirs.status_code == 500 and mine.json() == theirs.json()
    unfit = httpx.post(direct, json={"fn_index": 0}, timeout=30)
    assert unfit.status_code == 422 and unfit.json()["detail"][0]["loc"] == ["data"]


def test_an_app_with_a_login_keeps_gradios_route_and_its_checks():
    demo = counter_app()
    app, _, _ = demo.launch(server_port=free_port(), prevent_thread_lock=True, quiet=True, auth=("teacher", "pw"))
    try:
        assert direct_route.route(app) is None
    finally:
        demo.close()


def test_an_app_whose_private_router_is_hidden_answers_through_gradios_route_with_one_warning(monkeypatch, caplog):
    """A FastAPI that renamed `_IncludedRouter.original_router`: the direct route stands aside, one line says so, and
    every event is still answered (by gradio's route)."""
    monkeypatch.setattr(direct_route, "INCLUDED", "renamed_router")
    monkeypatch.setattr(state_holder, "SessionState", state_holder.SessionState)  # put back after the test
    demo = counter_app()
    port = free_port()
    app, _, _ = demo.launch(server_port=port, prevent_thread_lock=True, quiet=True)
    at_path = lambda: sum(getattr(r, "path", None) == direct_route.PATH for r in app.router.routes)  # noqa: E731
    before = at_path()
    try:
        with caplog.at_level("WARNING", logger=direct_route.__name__):
            kit.install(demo, app)
        said = [r.getMessage() for r in caplog.records if r.name == direct_route.__name__]
        assert len(said) == 1 and "gradio's route answers" in said[0], said
        assert at_path() == before  # no direct route put before gradio's
        url = f"http://127.0.0.1:{port}/gradio_api/run/add"
        first, again = post(url, 2, "one"), post(url, 3, "one")
        assert first.status_code == again.status_code == 200 and again.json()["data"] == [None, 5]
    finally:
        demo.close()
