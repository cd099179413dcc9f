"""The server's CPU for one Prefill click, split into its events: the Prefill itself, and the panels below the chart,
which the page asks for once the chart is drawn (a `.then` event the browser sends; `bench/classroom_load.py` times the
Prefill alone). One student clicks one preset again and again, one click after another, so no wait on others is
counted; the server's CPU time is read from /proc around each event (it counts every thread of the server: the
scheduler's copies from the prefix cache, torch's threads). Run it against an app already started, on a quiet machine,
before and after a change; the page's outputs per event are printed with it.

    .venv/bin/python bench/prefill_click.py --url http://127.0.0.1:7860/ --server-pid PID [--clicks 30]
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

import httpx
from gradio_client import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.classroom_load import GREEDY, cpu_seconds, prompt_for  # noqa: E402
from bench.page_calls import PageCaller  # noqa: E402
from ui.context import RAW  # noqa: E402
from visuals.distribution import MODES  # noqa: E402


def click_events(client: Client, api_name: str) -> list[dict]:
    """The event named `api_name` and those the page sends once its answer is drawn (its `.then`s)."""
    deps = client.config["dependencies"]
    first = next(d for d in deps if d.get("api_name") == api_name)
    return [first, *(d for d in deps if d.get("trigger_after") == first["id"])]


def send(http: httpx.Client, client: Client, fn_index: int, data: list) -> None:
    """An event by its index, as the page sends an unnamed one; returns once it completed."""
    payload = {"data": data, "fn_index": fn_index, "event_data": None, "trigger_id": None}
    joined = http.post(client.sse_data_url, json={**payload, "session_hash": client.session_hash})
    event_id = joined.json()["event_id"]
    with http.stream("GET", client.sse_url, params={"session_hash": client.session_hash}) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if message.get("event_id") == event_id and message.get("msg") == "process_completed":
                    if not message.get("success"):
                        raise RuntimeError(f"event {fn_index} failed: {message.get('output')}")
                    return
    raise RuntimeError(f"the event stream closed before event {fn_index} completed")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--clicks", type=int, default=30)
    args = parser.parse_args(argv)
    client = Client(args.url, verbose=False, analytics_enabled=False, httpx_kwargs={"timeout": 120})
    call, http = PageCaller(client), httpx.Client(timeout=None)
    events = click_events(client, "prefill")
    if len(events) != 2:
        raise RuntimeError(f"a Prefill click sends {len(events)} events; this bench knows the Prefill and one .then")
    prefill, side = events
    # the side panels' inputs: the run id, the eight knobs, the strategies panel's open state (states: the server's)
    side_data = [None, *GREEDY, None]
    if len(side_data) != len(side["inputs"]):
        raise RuntimeError(f"the side panels take {len(side['inputs'])} inputs; this bench sends {len(side_data)}")
    prefill_args = (None, prompt_for(0), RAW, 0, 3, "", MODES[0], *GREEDY)  # None: the app's own model
    call("/prompt_view", None, prompt_for(0), RAW)
    for _ in range(3):  # warm-up: the first draws, the first run's caches
        call("/prefill", *prefill_args)
        send(http, client, side["id"], side_data)
    prefill_ms, side_ms = [], []
    for _ in range(args.clicks):
        a = cpu_seconds(args.server_pid)
        call("/prefill", *prefill_args)
        b = cpu_seconds(args.server_pid)
        send(http, client, side["id"], side_data)
        c = cpu_seconds(args.server_pid)
        prefill_ms.append((b - a) * 1e3)
        side_ms.append((c - b) * 1e3)
    result = {
        "clicks": args.clicks,
        "events_per_click": len(events),
        "prefill_outputs": len(prefill["outputs"]),
        "side_outputs": len(side["outputs"]),
        "server_cpu_ms_per_click": round((sum(prefill_ms) + sum(side_ms)) / args.clicks, 1),
        "prefill_event_ms": round(statistics.mean(prefill_ms), 1),
        "side_event_ms": round(statistics.mean(side_ms), 1),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
