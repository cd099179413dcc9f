"""The server's CPU for one Prefill click: its events (one: its answer holds the panels below the chart; an app whose
page asks for the panels in a `.then` of their own is refused, as the bench of that app measured it). One student
clicks one preset again and again, one click after another, so no wait on others is counted; the server's CPU time
is read from /proc around each click (it counts every thread of the server: the scheduler's copies from the prefix
cache, torch's threads). Run it against an app already started, on a quiet machine, before and after a change; the
page's inputs and outputs per event are printed with it.

    .venv/bin/python bench/prefill_click.py --url http://127.0.0.1:7860/ --server-pid PID [--clicks 30]
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

from gradio_client import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.classroom_load import PAGE, cpu_seconds, prompt_for  # noqa: E402
from bench.page_calls import PageCaller  # noqa: E402
from ui.context import RAW  # noqa: E402


def click_events(client: Client, api_name: str) -> list[dict]:
    """The event named `api_name` and those the page sends once its answer is drawn (its `.then`s)."""
    deps = client.config["dependencies"]
    first = next(d for d in deps if d.get("api_name") == api_name)
    return [first, *(d for d in deps if d.get("trigger_after") == first["id"])]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--clicks", type=int, default=30)
    args = parser.parse_args(argv)
    client = Client(args.url, verbose=False, analytics_enabled=False, httpx_kwargs={"timeout": 120})
    call = PageCaller(client)
    events = click_events(client, "prefill")
    if len(events) != 1:
        raise RuntimeError(f"a Prefill click sends {len(events)} events; this bench knows a click of one event")
    prefill_args = (None, prompt_for(0), RAW, 0, 3, "", PAGE)  # None: the app's own model
    call("/prompt_view", None, prompt_for(0), RAW)
    for _ in range(3):  # warm-up: the first draws, the first run's caches
        call("/prefill", *prefill_args)
    prefill_ms = []
    for _ in range(args.clicks):
        a = cpu_seconds(args.server_pid)
        call("/prefill", *prefill_args)
        prefill_ms.append((cpu_seconds(args.server_pid) - a) * 1e3)
    result = {
        "clicks": args.clicks,
        "events_per_click": len(events),
        "prefill_inputs": len(events[0]["inputs"]),
        "prefill_outputs": len(events[0]["outputs"]),
        "server_cpu_ms_per_click": round(statistics.mean(prefill_ms), 1),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
