"""No student can stop the class: a regex that backtracks, a body too large and a request that names no event, each
sent to an app of this module's own (its log kept in a file), while a second client asks the server a plain GET
again and again, as every open page does every few seconds.

The regexes are the ones that froze the server: `(.+)+X` (Python's re took minutes on a sample that almost matched,
holding the interpreter lock, so no other request was answered) and the bounded `(?:.|.){0,26}X` (about 4 s a
sample)."""

import contextlib
import http.client
import threading
import time
from urllib.parse import urlsplit

import httpx
import pytest

from tests.helpers.pages import idle, open_tab, until
from ui import limits
from ui.constrained.tab import SPEC
from ui.launch import free_port, start_app
from ui.server_note import ROUTE

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
RUN_S = 300
GAP_S = 0.5  # the longest a plain GET may wait for its answer while the regexes run


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    log = tmp_path_factory.mktemp("bounded") / "app.log"
    port = free_port()
    proc = start_app(port, log=log, OMP_NUM_THREADS="1")
    yield f"http://127.0.0.1:{port}/", log
    proc.terminate()
    proc.wait(timeout=20)


class Asker(threading.Thread):
    """A second client: a plain GET of the server's note, one after another; `worst` is the longest one waited."""

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url, self.done = url + ROUTE.lstrip("/"), threading.Event()
        self.waits: list[tuple[str, float]] = []  # (what the page was doing, seconds a GET waited)
        self.doing = "starting"

    def run(self) -> None:
        with httpx.Client(timeout=30) as http:
            while not self.done.is_set():
                start = time.perf_counter()
                # no answer within the client's 30 s counts as the 30 s it waited
                with contextlib.suppress(httpx.HTTPError):
                    http.get(self.url).raise_for_status()
                self.waits.append((self.doing, time.perf_counter() - start))
                self.done.wait(0.05)

    def worst(self) -> tuple[str, float]:
        return max(self.waits, key=lambda w: w[1])

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.join(timeout=60)


def grammar(page, kind: str, text: str) -> None:
    page.locator("#constrained-kind").get_by_text(kind, exact=True).click()
    box = page.locator("#constrained-text .cm-content")
    box.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(text)
    page.locator("#constrained-samples input").fill("2")
    page.locator("#constrained-samples input").press("Tab")
    idle(page)


def status(page) -> str:
    return page.locator("#constrained-status").inner_text()


@pytest.mark.parametrize("regex", [r"(.+)+X", r"(?:.|.){0,26}X"])
def test_a_backtracking_regex_leaves_every_other_request_answered(browser, served, regex):
    url, _ = served
    page = open_tab(browser, url, SPEC.title, "#constrained-step")
    try:
        # what the tab does once, as its first grammar is compiled (llguidance's view of the vocabulary, 1-2 s), is
        # done before the second client starts asking: the claim is about the regex, on a server already warm
        page.click("#constrained-step")
        until(page, lambda: "sampled" in status(page), RUN_S, "a first step")
        grammar(page, "regular expression", regex)
        with Asker(url) as asker:
            asker.doing = "Sample N times"
            page.click("#constrained-measure")
            until(page, lambda: "valid" in page.locator("#constrained-measure-md").inner_text(), RUN_S, "the samples")
            asker.doing = "Step"
            page.click("#constrained-step")
            until(page, lambda: "sampled" in status(page), RUN_S, "a step under the regex")
            asker.doing = "Run to end"
            page.click("#constrained-end")
            until(page, lambda: "stopped" in status(page), RUN_S, "the run to its end")
            idle(page)
        assert len(asker.waits) > 20, "the second client asked too few times to say anything"
        doing, worst = asker.worst()
        print(f"{regex}: {len(asker.waits)} GETs, the longest {worst * 1000:.0f} ms during {doing}")
        assert worst < GAP_S, f"a plain GET waited {worst:.2f} s during {doing} under {regex!r}"
    finally:
        page.close()


def test_a_body_over_the_limit_is_refused_before_it_is_read_and_the_log_keeps_none_of_it(served):
    url, log = served
    before = log.stat().st_size
    at = urlsplit(url)
    http = http_client(at)
    size = 20_000_000
    http.putrequest("POST", "/gradio_api/run/predict")
    http.putheader("Content-Type", "application/json")
    http.putheader("Content-Length", str(size))
    http.endheaders()
    http.send(b'{"data": ["' + b"x" * 65_536)  # the server answers before the rest is sent
    answer = http.getresponse()
    assert answer.status == 413 and size > limits.BODY_LIMIT
    http.close()
    assert log.stat().st_size - before < 1024


def test_a_request_for_no_event_is_answered_400_and_logs_one_line(served):
    url, log = served
    before = log.read_text(errors="replace")
    with httpx.Client(timeout=30) as http:
        for path in ("gradio_api/run/predict", "gradio_api/queue/join"):
            said = http.post(url + path, json={"data": [], "fn_index": 99_999, "session_hash": "x"})
            assert said.status_code == 400 and "99999" in said.json()["error"]
        assert http.get(url + "monitoring").status_code == 403  # its dashboard's key is printed to no log
    added = log.read_text(errors="replace")[len(before) :].splitlines()
    assert len(added) == 2 and all(line.startswith("WARNING: refused POST") for line in added), added
    assert "Traceback" not in "".join(added)


def http_client(at) -> http.client.HTTPConnection:
    return http.client.HTTPConnection(at.hostname, at.port, timeout=60)
