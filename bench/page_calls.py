"""A student's clicks sent the way the page sends them, for the timed part of a load test.

gradio_client's `predict` opens a new HTTP connection for every call and waits for the answer by polling a queue
every 50 ms: up to 50 ms on every latency it reports, and, thirty students at once, a core's worth of CPU on the
machine the server runs on. A browser does neither. A queued event it posts to the queue (`queue/join`), then reads
the session's event stream until the event completes; an event that skips the queue (`queue=False`, as the Step
tab's clicks do: ui/events.py) it posts to `/run/predict` with the event's index, and the response is the answer.
`PageCaller` does the same (an event stream the server closes is opened again, as EventSource does),
choosing by the event's own flag in the app's config, over one kept-alive connection, in
the session of a `gradio_client.Client` (so that client can still download that session's files afterwards)."""

import json

import httpx
from gradio_client import Client, utils

from deploy.hall import COOKIE

EVENT_POSTS = ("/queue/join", "/run/")  # what a page posts for an event: queued, or direct
# A browser's EventSource opens a dropped event stream again by itself. Through a lecture hall's proxy, with a hundred
# students opening their pages at once, one stream in a run was closed before it answered (seen in a run with
# one replica): open it again, as the page would, and count it
STREAM_RETRIES = 2


def first_request(url: str) -> str:
    """A browser's first request, for its cookie: the plain note route, which costs the server nothing (the page
    itself, its config included, is fetched by the student's Client right after, as before)."""
    return url.rstrip("/") + "/lab/server-note"


def pinned(url: str) -> tuple[str, dict]:
    """Through a lecture hall's proxy (`make hall`): a new browser's replica, from the cookie its first request gets,
    and the headers that keep every later request of that browser there."""
    with httpx.Client(timeout=120) as page:
        page.get(first_request(url)).raise_for_status()
        replica = page.cookies.get(COOKIE)
    if replica is None:
        raise RuntimeError(f"{url} set no {COOKIE} cookie: is it a lecture hall's proxy (make hall)?")
    return replica, {"Cookie": f"{COOKIE}={replica}"}


def is_event_post(url: str) -> bool:
    """Whether a request the page made (its URL) is a gradio event, queued or direct."""
    return any(path in url for path in EVENT_POSTS)


class PageCaller:
    def __init__(self, client: Client, replica: str | None = None):
        # the client's headers: through a lecture hall's proxy, the cookie that keeps the session on its replica
        self.client, self.http = client, httpx.Client(timeout=None, headers=client.headers)
        self.headers, self.replica = client.headers, replica  # `replica`: the hall's replica it stays on (`pinned`)
        self.queued = {dep["id"]: dep.get("queue") is not False for dep in client.config["dependencies"]}
        self.reconnects = 0  # event streams closed on it and opened again (a load test reports them)

    def __call__(self, api_name: str, *data) -> tuple:
        """Call the event named `api_name` with the values of its visible inputs (as `Client.predict` takes them);
        return its visible outputs (the session's state stays on the server, as for the page), or raise with the
        server's message."""
        fn_index = self.client._infer_fn_index(api_name, None)
        endpoint = self.client.endpoints[fn_index]
        data = utils.construct_args(endpoint.parameters_info, data, {})  # inputs left out take their defaults
        payload = {
            "data": list(endpoint.insert_empty_state(*data)),
            "fn_index": fn_index,
            "event_data": None,
            "trigger_id": None,
            "session_hash": self.client.session_hash,
        }
        output = self._queued(payload, api_name) if self.queued[fn_index] else self._direct(payload, api_name)
        return endpoint.remove_skipped_components(*output["data"])

    def _direct(self, payload: dict, api_name: str) -> dict:
        answer = self.http.post(f"{self.client.src_prefixed}run/predict", json=payload)  # the event by its fn_index
        if answer.status_code != 200:
            raise RuntimeError(answer.json().get("error") or f"{api_name} failed ({answer.status_code})")
        return answer.json()

    def _queued(self, payload: dict, api_name: str) -> dict:
        joined = self.http.post(self.client.sse_data_url, json=payload)
        joined.raise_for_status()
        event_id = joined.json()["event_id"]
        for attempt in range(1 + STREAM_RETRIES):
            try:
                return self._completed(event_id, api_name)
            except httpx.RemoteProtocolError:  # closed on us: open it again, as EventSource does
                if attempt == STREAM_RETRIES:
                    raise
                self.reconnects += 1
        raise AssertionError("unreachable")

    def _completed(self, event_id: str, api_name: str) -> dict:
        """Read the session's event stream until `event_id` completes (its output), as the page's EventSource does."""
        params = {"session_hash": self.client.session_hash}
        with self.http.stream("GET", self.client.sse_url, params=params) as stream:
            for line in stream.iter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                if message.get("event_id") != event_id or message.get("msg") != "process_completed":
                    continue
                output = message.get("output") or {}
                if not message.get("success"):
                    raise RuntimeError(output.get("error") or f"{api_name} failed")
                return output
        raise RuntimeError(f"the event stream closed before {api_name} completed")

    def close(self) -> None:
        self.http.close()
