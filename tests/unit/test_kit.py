"""ui.kit: every workaround of the framework's private parts installed from one function, and none of them on plain
gradio (`DECODING_LAB_PLAIN=1`)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import gradio as gr
import pytest
from gradio import state_holder
from gradio.context import LocalContext
from starlette.routing import Route

from app import queued
from ui import alive, kit, validate
from ui.kit import analytics, direct_route, page_start, queue_wake
from ui.kit.session_state import LazySessionState
from ui.kit.switch import PLAIN
from ui.launch import free_port

TAGS = '<link rel="stylesheet" href="lab/head.x.css">'


@pytest.fixture
def launched(monkeypatch):
    """A one-event app on the app's queue, launched, nothing of the kit on it yet."""
    monkeypatch.setattr(state_holder, "SessionState", state_holder.SessionState)  # put back after the test
    monkeypatch.delenv(analytics.ENV, raising=False)
    with gr.Blocks() as demo:
        gr.Button().click(lambda: None)
    app, _, _ = queued(demo).launch(server_port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        yield demo, app
    finally:
        demo.close()


def _page_route(app):
    return next(r for r in app.router.routes if getattr(r, "path", None) == "/" or getattr(r, "page", None))


def test_install_puts_every_workaround_on_the_launched_app(launched, monkeypatch):
    monkeypatch.delenv(PLAIN, raising=False)
    demo, app = launched
    kit.install(demo, app, TAGS)
    queue = demo._queue
    assert isinstance(queue.sleep_when_free, queue_wake.Idle) and queue.sleep_when_free == queue_wake.POLL_S
    assert isinstance(queue.progress_update_sleep_when_free, queue_wake.Idle)
    assert queue.ANAYLTICS_CACHE_FREQUENCY == analytics.EVERY
    assert "postprocess_data" in vars(demo)  # skipped outputs passed over (ui/kit/skips.py)
    assert state_holder.SessionState is LazySessionState
    page = _page_route(app)
    assert isinstance(page, page_start.FirstInHead) and page.html == (page_start.TRACKER_FRAMES + TAGS).encode()
    direct = app.router.routes[0]
    assert isinstance(direct, Route) and direct.path == direct_route.PATH
    assert kit.head() and kit.launch_head(TAGS) is None  # the kit puts the head first in each page itself
    assert validate.knob_slider(0, 1).preprocess(5) == 5  # to the handler's check, which names the control


def test_plain_gradio_gets_none_of_the_kit(launched, monkeypatch):
    monkeypatch.setenv(PLAIN, "1")
    demo, app = launched
    routes = list(app.router.routes)
    kit.install(demo, app, TAGS)
    assert app.router.routes == routes  # gradio's page and predict routes, as gradio made them
    queue = demo._queue
    assert not isinstance(queue.sleep_when_free, queue_wake.Idle) and queue.ANAYLTICS_CACHE_FREQUENCY == 1
    assert "postprocess_data" not in vars(demo)
    assert state_holder.SessionState is not LazySessionState
    assert kit.head() == "" and kit.launch_head(TAGS) == TAGS  # the head through gradio's public launch(head=...)
    with pytest.raises(gr.Error, match="greater than maximum"):  # gradio's own check of a typed value
        validate.knob_slider(0, 1).preprocess(5)
    token = LocalContext.request.set(type("Request", (), {"headers": {alive.HEADER: "another boot"}})())
    try:
        assert not alive.page_restarted()  # no request read: the public way would be a gr.Request parameter
    finally:
        LocalContext.request.reset(token)


ROOT = Path(__file__).resolve().parents[2]
# what only the kit may touch: gradio's and FastAPI's modules beyond `gradio` itself, and gradio's private queue
PRIVATE = re.compile(r"^\s*(from|import) (gradio\.|fastapi\.routing)|\._queue\b", re.M)


def _kit_table() -> str:
    """docs/architecture.md's table of the kit's workarounds: the first table after "**The kit.**"."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    after = doc[doc.index("**The kit.**") :]
    return after[after.index("\n|") : after.index("\n\n", after.index("\n|"))]


def test_the_architecture_table_lists_exactly_the_kit_s_modules():
    rows = [line.split("|")[2] for line in _kit_table().strip().splitlines()[2:]]  # each row's "where"
    listed = [m for where in rows for m in re.findall(r"`ui/kit/(\w+)\.py`", where)]
    modules = {p.stem for p in Path(kit.__file__).parent.glob("*.py")} - {"__init__", "switch"}
    assert sorted(listed) == sorted(modules), f"the table lists {sorted(listed)}, ui/kit holds {sorted(modules)}"
    assert all(re.search(r"`ui/kit/\w+\.py`", where) for where in rows), "a row of the kit's table is outside ui/kit"


def test_no_module_outside_the_kit_reaches_into_gradio_s_or_fastapi_s_private_parts():
    outside = [ROOT / "app.py", *(p for p in (ROOT / "ui").rglob("*.py") if "kit" not in p.relative_to(ROOT).parts)]
    reaching = [str(p.relative_to(ROOT)) for p in outside if PRIVATE.search(p.read_text())]
    assert reaching == [], f"only ui/kit may use gradio's or FastAPI's private parts: {reaching}"


def test_plain_gradio_imports_none_of_the_workarounds_modules():
    """So that the app still runs on plain gradio when an upgrade removed a name a workaround imports."""
    check = (
        "import sys; import app, ui.kit; ui.kit.install(app.demo, None); ui.kit.head(); ui.alive.page_restarted(); "
        "print(sorted(m for m in sys.modules if m.startswith('ui.kit.') and m not in ('ui.kit.switch', 'ui.kit.slider',"
        " 'ui.kit.request')))"
    )
    env = {**os.environ, PLAIN: "1"}
    done = subprocess.run(
        [sys.executable, "-c", check, "--model", "tiny-random"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
