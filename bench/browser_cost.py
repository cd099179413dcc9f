"""What one click costs a student's browser and the server: main-thread time from Chrome's own counters, the
server's CPU, the gradio events and bytes it sends, and what the page holds after.

    .venv/bin/python bench/browser_cost.py [--views step speculative constrained quantization serving]
        [--clicks 10] [--baseline DIR] [--rounds 1] [--viewport 1280x720]

For each view: open its tab in headless Chromium (Debian's), make its first action, then click its repeated action
`--clicks` times, each on a settled page (no event in flight and the main thread quiet, as when a learner reads the
chart before the next click). Per click:
- `main_ms`: the page's main-thread time (CDP `Performance.getMetrics`, TaskDuration in thread time), with its
  `script_ms`, `style_ms` and `layout_ms`;
- `server_cpu_ms`: the app process's CPU (user + system, every thread: /proc/PID/stat) over the click;
- `events`: the gradio events the click sent (`queue/join` posts, and `/run/` posts for the events that skip the
  queue; the page's own timers left out);
- `kb`: what the server sent back (the event stream's bytes and direct events' responses, as the network received
  them).
After the clicks, garbage collected: DOM nodes, JS heap, event listeners.

The continuous-batching view has no click: its live refresh runs every 2 s while simulated students step, and a
"click" there is one refresh (the window's totals ÷ the refreshes in it).

`--baseline DIR` runs another checkout's app.py (the code before a change) in turns with this one's, the same
views and clicks, each app on a fresh server: the two sets of numbers come from one run on one machine. `--plain`
does the same with this checkout's app on plain gradio (`DECODING_LAB_PLAIN=1`: none of ui/kit), as `plain`: what the
kit's workarounds buy, together.
Prints a table to stderr and, as its last line, one JSON object.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from bench.page_calls import is_event_post  # noqa: E402
from ui.launch import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_app  # noqa: E402

# the main thread "quiet": under this much work in each 100 ms, over QUIET_FOR_S, with no gradio event in flight. A
# gradio 6 page left to itself is never silent (IDLE): the status tracker shown while it loads keeps asking for a frame
# 60 times a second, even on a bare gradio page with one checkbox, so the page lays out and paints a frame each time,
# and a larger page pays more a frame. This app's page ends that loop (ui/kit/page_start.py); a checkout from before it
# (`--baseline`) still pays it. `idle_ms_per_s`: that rate as the page opens (Start here); `view_idle_ms_per_s`: on
# the view, after its first action, as each click finds it; `main_net_ms` takes the view's rate out
QUIET_MS = 12.0
QUIET_FOR_S = 0.5
IDLE_WINDOW_S = 3.0
SETTLE_TIMEOUT_S = float(os.environ.get("SETTLE", 180))
SERVING_WINDOW_S = 20.0  # the live refresh measured over this long


class Page:
    """One headless page with Chrome's counters and the page's gradio traffic watched over CDP."""

    def __init__(self, browser, url: str, viewport: dict):
        self.page = browser.new_page(viewport=viewport)
        self.page.set_default_timeout(SETTLE_TIMEOUT_S * 1000)
        self.cdp = self.page.context.new_cdp_session(self.page)
        self.cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
        self.cdp.send("Network.enable")
        self.open: dict[str, str] = {}  # request id -> url, for the gradio requests not yet finished
        self.joins: list[dict] = []  # every event posted, as its payload
        self.received: dict[str, int] = {}  # request id -> bytes received, for the event streams
        self.cdp.on("Network.requestWillBeSent", self._sent)
        self.cdp.on("Network.dataReceived", self._data)
        self.cdp.on("Network.loadingFinished", self._done)
        self.cdp.on("Network.loadingFailed", self._done)
        self.page.on("request", self._joined)
        self.page.goto(url)
        # the app's navigation (or, in a checkout from before the lessons had pages, its tabs) is drawn
        self.page.wait_for_function("() => window.gradio_config && document.querySelector('#lab-nav, #lab-tabs')")
        self.timers = self._timer_events()
        self.view_idle = 0.0  # ms a second the page spends with nothing happening, on the view (each view measures it)

    def _sent(self, e: dict) -> None:
        url = e["request"]["url"]
        if "/queue/" not in url and not is_event_post(url):
            return
        self.open[e["requestId"]] = url
        if "/queue/data" in url or "/run/" in url:  # the answers: on the event stream, or a direct event's response
            self.received.setdefault(e["requestId"], 0)

    def _joined(self, request) -> None:
        if is_event_post(request.url) and request.post_data:
            self.joins.append(json.loads(request.post_data))

    def _data(self, e: dict) -> None:
        if e["requestId"] in self.received:
            self.received[e["requestId"]] += e.get("encodedDataLength") or e.get("dataLength", 0)

    def _done(self, e: dict) -> None:
        self.open.pop(e["requestId"], None)

    def _timer_events(self) -> set[int]:
        """The events the page fires on its own (a gr.Timer's ticks): not a click's."""
        deps = self.page.evaluate("() => window.gradio_config.dependencies.map(d => d.targets.map(t => t[1]))")
        return {i for i, targets in enumerate(deps) if "tick" in targets}

    def metrics(self) -> dict[str, float]:
        return {m["name"]: m["value"] for m in self.cdp.send("Performance.getMetrics")["metrics"]}

    def settle(self) -> None:
        """Until no gradio request is in flight and the main thread has been quiet for QUIET_FOR_S."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        last, quiet_since = self.metrics()["TaskDuration"], None
        while time.monotonic() < deadline:
            self.page.wait_for_timeout(100)
            now = self.metrics()["TaskDuration"]
            busy = (now - last) * 1e3 >= QUIET_MS or any("/queue/" in u for u in self.open.values())
            last = now
            if busy:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= QUIET_FOR_S:
                return
        raise TimeoutError(f"the page did not settle within {SETTLE_TIMEOUT_S} s; open: {list(self.open.values())}")

    def idle_rate(self) -> float:
        """The page's main-thread ms per second of wall time while nothing happens (its own timers)."""
        self.settle()
        m0, t0 = self.metrics()["TaskDuration"], time.monotonic()
        self.page.wait_for_timeout(IDLE_WINDOW_S * 1000)
        return (self.metrics()["TaskDuration"] - m0) * 1e3 / (time.monotonic() - t0)

    def held(self) -> dict:
        """What the page holds, garbage collected: DOM nodes, JS heap, event listeners."""
        self.cdp.send("HeapProfiler.collectGarbage")
        m = self.metrics()
        return dict(
            nodes=int(m["Nodes"]), js_heap_mb=round(m["JSHeapUsedSize"] / 1e6, 1), listeners=int(m["JSEventListeners"])
        )

    def click_events(self, since: int) -> int:
        return sum(1 for j in self.joins[since:] if j.get("fn_index") not in self.timers)

    def received_kb(self) -> float:
        return sum(self.received.values()) / 1024


def server_cpu_s(pid: int) -> float:
    """The process's CPU seconds so far, every thread, user and system (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(page: Page, pid: int, action) -> dict:
    """One action on a settled page, until the page settles again: its costs."""
    page.settle()
    m0, cpu0, joins0, kb0 = page.metrics(), server_cpu_s(pid), len(page.joins), page.received_kb()
    t0 = time.monotonic()
    action()
    page.settle()
    m1, wall_s = page.metrics(), time.monotonic() - t0
    delta = lambda name: (m1[name] - m0[name]) * 1e3  # noqa: E731
    return dict(
        main_ms=delta("TaskDuration"),
        wall_s=wall_s,
        script_ms=delta("ScriptDuration"),
        style_ms=delta("RecalcStyleDuration"),
        layout_ms=delta("LayoutDuration"),
        server_cpu_ms=(server_cpu_s(pid) - cpu0) * 1e3,
        events=page.click_events(joins0),
        kb=page.received_kb() - kb0,
    )


def open_tab(page: Page, title: str, ready: str) -> None:
    """The lesson's page, from the navigation (a checkout from before the lessons had pages: its tab)."""
    nav = page.page.locator("#lab-nav")
    if nav.count():
        with page.page.expect_navigation():
            nav.get_by_role("link", name=title, exact=True).click()
    else:
        page.page.get_by_role("tab", name=title, exact=True).click()
    page.page.locator(ready).first.wait_for()


def clicks_on(page: Page, pid: int, first: str, again: str, n: int) -> list[dict]:
    """`first` pressed once (not measured), then `again` pressed `n` times, each measured."""
    page.page.click(first)
    page.view_idle = page.idle_rate()  # the page as each click finds it: what it spends anyway while a click lasts
    return [measured(page, pid, lambda: page.page.click(again)) for _ in range(n)]


def step_view(page: Page, pid: int, n: int) -> list[dict]:
    open_tab(page, "Step by step", "#step-buttons")
    return clicks_on(page, pid, "#step-prefill", "#step-step", n)


def speculative_view(page: Page, pid: int, n: int) -> list[dict]:
    open_tab(page, "Speculative decoding", "#speculative-buttons")
    return clicks_on(page, pid, "#speculative-prefill", "#speculative-round", n)


def constrained_view(page: Page, pid: int, n: int) -> list[dict]:
    open_tab(page, "Constrained decoding", "#constrained-step")
    page.view_idle = page.idle_rate()  # no first action: the view as it opens is the page each click finds
    return [measured(page, pid, lambda: page.page.click("#constrained-step")) for _ in range(n)]


def quantization_view(page: Page, pid: int, n: int) -> list[dict]:
    open_tab(page, "Quantization", "#quantization-step")
    page.view_idle = page.idle_rate()  # no first action: the view as it opens is the page each click finds
    return [measured(page, pid, lambda: page.page.click("#quantization-step")) for _ in range(n)]


def serving_view(page: Page, pid: int, n: int) -> list[dict]:
    """The live refresh while 8 simulated students step: the window's costs ÷ the refreshes in it."""
    open_tab(page, "Continuous batching", "#serving-open")
    page.view_idle = page.idle_rate()  # before Open: the page's own frames, not the live view's refreshes
    page.page.click("#serving-open")
    page.page.locator("#serving-live input").check()
    page.page.wait_for_timeout(3000)  # the first refreshes draw the charts from blank: not what each one costs
    m0, cpu0, joins0, kb0 = page.metrics(), server_cpu_s(pid), len(page.joins), page.received_kb()
    page.page.wait_for_timeout(SERVING_WINDOW_S * 1000)
    # the refreshes are the timer's own events, which `click_events` leaves out
    m1, refreshes = page.metrics(), sum(1 for j in page.joins[joins0:] if j.get("fn_index") in page.timers)
    page.page.locator("#serving-live input").uncheck()
    page.page.click("#serving-stop")
    page.settle()
    per = lambda total: total / max(refreshes, 1)  # noqa: E731
    delta = lambda name: per((m1[name] - m0[name]) * 1e3)  # noqa: E731
    return [
        dict(
            main_ms=delta("TaskDuration"),
            wall_s=per(SERVING_WINDOW_S),
            script_ms=delta("ScriptDuration"),
            style_ms=delta("RecalcStyleDuration"),
            layout_ms=delta("LayoutDuration"),
            server_cpu_ms=per((server_cpu_s(pid) - cpu0) * 1e3),
            events=1,
            kb=per(page.received_kb() - kb0),
            refreshes=refreshes,
        )
    ]


VIEWS = {
    "step": step_view,
    "speculative": speculative_view,
    "constrained": constrained_view,
    "quantization": quantization_view,
    "serving": serving_view,
}


def summary(clicks: list[dict]) -> dict:
    """Medians over the clicks, and the spread of main-thread time."""
    out = {k: round(statistics.median(c[k] for c in clicks), 2) for k in clicks[0] if k != "refreshes"}
    main = sorted(c["main_ms"] for c in clicks)
    out |= dict(main_ms_min=round(main[0], 1), main_ms_max=round(main[-1], 1), clicks=len(clicks))
    if "refreshes" in clicks[0]:
        out["refreshes"] = clicks[0]["refreshes"]
    return out


def run_app(root: Path, views: list[str], n: int, viewport: dict, env: dict | None = None) -> dict:
    """One app from `root` (with `env` in its environment), on a fresh server: each view in a fresh page (its own
    session)."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    proc = start_app(port, root=root, OMP_NUM_THREADS="1", **(env or {}))
    out = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for name in views:
                page = Page(browser, f"http://127.0.0.1:{port}/", viewport)
                idle = page.idle_rate()  # as the page opens, on Start here
                clicks = VIEWS[name](page, proc.pid, n)
                # the click's own work: what the view's page spends anyway while the click's window lasts, out (a
                # larger page costs more a frame, and gradio's page draws frames even when idle: see IDLE below)
                for c in clicks:
                    c["main_net_ms"] = c["main_ms"] - page.view_idle * c.get("wall_s", 0.0)
                rates = {"idle_ms_per_s": round(idle, 1), "view_idle_ms_per_s": round(page.view_idle, 1)}
                out[name] = summary(clicks) | page.held() | rates
                page.page.close()
                said = f"{root.name}{' (plain)' if env else ''}"
                print(f"{said:>12} {name:>12}: {json.dumps(out[name])}", file=sys.stderr, flush=True)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--views", nargs="+", choices=list(VIEWS), default=list(VIEWS))
    parser.add_argument("--clicks", type=int, default=10, help="measured clicks per view (after its first action)")
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout's app, run in turns with this")
    parser.add_argument("--plain", action="store_true", help="this app on plain gradio too, in turns with the kit's")
    parser.add_argument("--rounds", type=int, default=1, help="turns of each app")
    parser.add_argument("--viewport", default="1280x720", help="WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.viewport.split("x"))
    apps = {"this": (ROOT, None)} | ({"baseline": (args.baseline.resolve(), None)} if args.baseline else {})
    apps |= {"plain": (ROOT, {"DECODING_LAB_PLAIN": "1"})} if args.plain else {}
    runs = {name: [] for name in apps}
    for i in range(args.rounds):
        for name, (root, env) in apps.items() if i % 2 == 0 else reversed(apps.items()):  # ABBA: none always first
            runs[name].append(run_app(root, args.views, args.clicks, {"width": width, "height": height}, env))
    return dict(
        viewport=args.viewport,
        clicks=args.clicks,
        load_average=[round(x, 2) for x in os.getloadavg()],
        apps={name: str(root) + (" (plain gradio)" if env else "") for name, (root, env) in apps.items()},
        runs=runs,
    )


if __name__ == "__main__":
    print(json.dumps(main()))
