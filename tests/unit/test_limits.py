"""What one request may ask of the server (ui/limits.py): a body over its limit refused before it is read, a request
that names no event answered in one log line, and no line of the log longer than its cap."""

import io
import logging

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from ui import limits


async def echo(request: Request):
    return PlainTextResponse(f"read {len(await request.body())} bytes")


async def no_event(request: Request):
    await request.body()
    return {}[99_999]  # what gradio's route raises for an event index that does not exist


async def broken(request: Request):
    raise RuntimeError("a bug, not a bad request")


@pytest.fixture
def client():
    routes = [Route(p, f, methods=["POST"]) for p, f in (("/run", echo), (limits.UPLOAD_PATH, echo))]
    routes += [Route("/join", no_event, methods=["POST"]), Route("/bug", broken, methods=["POST"])]
    app = Starlette(routes=routes, middleware=limits.app_kwargs()["middleware"])
    return TestClient(app, raise_server_exceptions=False)


def test_a_body_over_the_limit_is_refused_with_413(client):
    assert client.post("/run", content=b"x" * limits.BODY_LIMIT).text == f"read {limits.BODY_LIMIT} bytes"
    assert client.post("/run", content=b"x" * (limits.BODY_LIMIT + 1)).status_code == 413


def test_a_chunked_body_is_counted_as_it_comes():
    chunks = iter([b"x" * limits.BODY_LIMIT, b"y"])
    app = Starlette(routes=[Route("/run", echo, methods=["POST"])], middleware=limits.app_kwargs()["middleware"])
    assert TestClient(app).post("/run", content=chunks).status_code == 413  # no Content-Length: a stream


def test_an_upload_may_be_as_large_as_gradios_file_limit_and_no_larger(client):
    assert client.post(limits.UPLOAD_PATH, content=b"x" * (5 * 1024 * 1024)).status_code == 200
    assert client.post(limits.UPLOAD_PATH, content=b"x" * (limits.UPLOAD_LIMIT + 1)).status_code == 413


def test_a_request_for_no_event_is_400_and_one_line(client, caplog):
    with caplog.at_level(logging.WARNING, logger=limits.log.name):
        answer = client.post("/join", content=b'{"fn_index": 99999}')
    assert answer.status_code == 400 and "99999" in answer.json()["error"]
    assert [r.getMessage() for r in caplog.records] == ["refused POST /join (19 bytes): KeyError: 99999"]
    assert all(r.exc_info is None for r in caplog.records)


def test_a_bug_is_not_taken_for_a_bad_request(client):
    assert client.post("/bug", content=b"{}").status_code == 500


def test_no_line_of_the_log_is_longer_than_its_cap():
    out = io.StringIO()
    capped = limits.CappedLines(out)
    capped.write("short line\n" + "v" * 20_000_008 + "\nlast\n")
    lines = out.getvalue().splitlines()
    assert lines[0] == "short line" and lines[2] == "last"
    assert len(lines[1]) < limits.LINE_LIMIT and lines[1].endswith("[20,000,008 characters, cut]")
