"""The lecture hall (deploy/hall.py): two app processes behind HAProxy. Each student stays on the replica its cookie
names, both replicas serve, each names itself under a step; a replica that is killed is taken out of rotation, its
student is sent to the other, whose answer says the run is gone and what to press, and one Prefill starts again."""

import json
import time

import httpx
from gradio_client import Client

from deploy.hall import COOKIE, haproxy_config
from ui.context import RAW
from ui.step.page_state import KNOB_FIELDS, written

PAGE = written(dict(zip(KNOB_FIELDS, [0.0, 0, 1.0, 0.0, 1.0, 0.0, 0.0, "transformers"])), on_screen="")


class Student:
    """A browser's session through the proxy: its own cookie jar, so its own replica."""

    def __init__(self, url: str):
        self.http = httpx.Client(timeout=120)
        self.http.get(url).raise_for_status()  # the page: the proxy picks a replica and says which in a cookie
        self.replica = self.http.cookies[COOKIE]
        headers = {"Cookie": f"{COOKIE}={self.replica}"}
        self.client = Client(url, verbose=False, analytics_enabled=False, headers=headers)

    def prefill(self, prompt: str, max_new: int = 6) -> list:
        return self.client.predict(None, prompt, RAW, 0, max_new, "", PAGE, api_name="/prefill")

    def step(self) -> list:
        return self.client.predict(PAGE, api_name="/step")


def message(answer) -> str:
    return answer[-1] if isinstance(answer, (list, tuple)) else str(answer)


def test_the_config_lists_each_replica_with_its_cookie():
    text = haproxy_config([7001, 7002])
    assert "server r1 127.0.0.1:7001 check cookie r1" in text and "server r2 127.0.0.1:7002 check cookie r2" in text
    assert f"cookie {COOKIE} insert" in text and "option redispatch" in text


def test_students_stay_on_their_replica_and_a_killed_replica_sends_them_to_the_other(hall):
    a, b = Student(hall.url), Student(hall.url)
    assert {a.replica, b.replica} == {"r1", "r2"}  # the first two browsers go to different replicas
    for student in (a, b):
        started = student.prefill("Here is one fact about the sea:")
        index = student.replica.removeprefix("r")
        assert f"on this server, {index} of 2" in json.dumps(started)  # each replica names itself under the chart
        answer = student.step()
        assert message(answer) == "", message(answer)
    assert message(b.step()) == ""  # b's run is where its cookie sends it, step after step

    hall.kill(int(a.replica.removeprefix("r")))
    deadline = time.monotonic() + 30
    while True:  # the proxy takes the dead replica out at the first connection it refuses
        try:
            gone = a.step()
            break
        except Exception:  # noqa: BLE001 -- the proxy may still try the dead one: it answers 503 until its checks say so
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    said = message(gone)
    assert "Prefill" in said, said  # the other replica never had a's run: it says so, and what to press
    a.prefill("Here is one fact about the sea:")
    assert message(a.step()) == ""  # one Prefill starts again, on the replica that is left
    assert message(b.step()) == ""  # b, on the replica that lived, never noticed
