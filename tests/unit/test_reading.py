"""How far a Prefill has read its prompt (ui/step/reading.py): the scheduler tells after each chunk of a prompt in
several, the route answers it under the page's id, and forgets it once the Prefill has answered."""

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from decoding.serving.scheduler import Scheduler
from ui.step import reading


@pytest.fixture()
def scheduler(tiny):
    return Scheduler(tiny, chunk_tokens=4)


def test_each_chunk_of_a_long_prompt_tells_how_far_it_has_read(tiny, scheduler):
    heard = []
    long_prompt = [(i * 7) % 50 + 1 for i in range(300)]
    scheduler.forward(long_prompt, None, 0, told=lambda read, of: heard.append((read, of)))
    assert heard == [(256, 300)]  # 256 tokens with no one stepping, then the last 44: the answer itself


def test_the_route_answers_how_far_under_the_pages_id_and_forgets_it():
    app = Starlette(routes=reading.routes(None))
    client = TestClient(app)
    told = reading.teller("abc123def456")
    told(512, 3004)
    assert client.get(reading.ROUTE, params={"asks": "abc123def456"}).json() == {"read": 512, "of": 3004}
    assert client.get(reading.ROUTE, params={"asks": "someoneelse1"}).json() == {}
    reading.forget("abc123def456")
    assert client.get(reading.ROUTE, params={"asks": "abc123def456"}).json() == {}


def test_no_id_or_one_a_page_could_not_have_made_is_not_kept():
    assert reading.teller("") is None and reading.teller("<script>") is None and reading.teller("x" * 200) is None


def test_it_keeps_at_most_its_cap_the_oldest_forgotten_first(monkeypatch):
    monkeypatch.setattr(reading, "KEPT", 3)
    for i in range(5):
        reading.teller(f"page{i:08d}")(i, 10)
    assert [reading.read(f"page{i:08d}") for i in range(5)] == [{}, {}] + [{"read": i, "of": 10} for i in (2, 3, 4)]
    for i in range(5):
        reading.forget(f"page{i:08d}")
