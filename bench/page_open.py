"""What opening a lesson costs a student's phone and the server, beside a bare gradio page: Chrome's own counters.

    .venv/bin/python bench/page_open.py [--baseline DIR] [--opens 3] [--students 30] [--viewport 390x844]
        [--throttle 4]

Each app (this checkout's; `--baseline DIR`, another checkout's app.py, the code before a change; and a bare gradio 6
page: a title, a button and two SVG charts, written out and run the same way) runs on a fresh server, one at a time.
Each is opened `--opens` times in a fresh headless Chromium page (Debian's) at `--viewport`, its CPU slowed
`--throttle` times (CDP `Emulation.setCPUThrottlingRate`, as a cheap phone or a school Chromebook), by the link a
class gets (`/?tab=step` for the app). Per open:
- `ready_s`: from the navigation's start until the main button (`#step-prefill`; the bare page's `#bare-go`) is on
  the page, drawn and enabled, read by a check the page runs every 50 ms;
- `main_ms`: the page's main-thread time (CDP `Performance.getMetrics` TaskDuration) from the navigation until the
  page settles (the main thread under 12 ms a 100 ms for 0.5 s, nothing of gradio's in flight);
- `kb`: every byte the network received for the page (encoded, as sent), `config_kb`: the page's gradio config as
  JSON (`window.gradio_config`), `nodes`: its DOM nodes once settled;
- `server_cpu_ms`: the server process's CPU (user + system, every thread: /proc/PID/stat) over the open, the page's
  scripts and styles included (each open is a fresh browser context, nothing cached);
- `page_cpu_ms`: the server's CPU for the page alone (its HTML, which holds its config, the redirect followed), over
  PAGE_GETS asked one after another: what each student of a class costs once gradio's files are in the browser's
  cache.
Then `--students` clients ask for the page at once (plain HTTP GETs of the page a class's link lands on, redirect
followed: the HTML, which holds the config): `crowd_p50_s`, `crowd_p95_s`, each client's time until its last byte.

Timings under a loaded machine are noisy: run it under `flock /tmp/cpu.lock`. Prints a table to stderr and, as its
last line, one JSON object.
"""

import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from bench.browser_cost import server_cpu_s  # noqa: E402
from ui.launch import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_app  # noqa: E402

# the bare gradio page the issue compares with: what any gradio 6 page costs, with two small SVG charts
BARE_APP = """
import argparse
import gradio as gr

BARS = "".join(f'<rect x="{i * 30}" y="{100 - h}" width="24" height="{h}" fill="#c2410c"/>'
               for i, h in enumerate([80, 12, 6, 3, 2]))
SVG = f'<svg viewBox="0 0 150 100" width="300" height="200">{BARS}</svg>'
with gr.Blocks(title="bare") as demo:
    gr.Markdown("# A bare gradio page")
    go = gr.Button("Go", elem_id="bare-go", variant="primary")
    gr.HTML(SVG)
    gr.HTML(SVG)
parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int)
demo.launch(server_port=parser.parse_args().port)
"""
READY = {"app": "#step-prefill", "bare": "#bare-go"}
LINK = {"app": "?tab=step", "bare": ""}
# the first time the main button is on the page, drawn and enabled (ms since the navigation's start)
WATCH_READY = """selector => {
  const look = setInterval(() => {
    const b = document.querySelector(selector);
    if (b && b.getClientRects().length && !b.disabled && !b.closest('.hide, [hidden]')) {
      window.__ready = performance.now();
      clearInterval(look);
    }
  }, 50);
}"""
QUIET_MS, QUIET_FOR_S, SETTLE_S = 12.0, 0.5, 240.0
PAGE_GETS = 20  # the page asked for one after another, for the server's CPU per page


def open_once(browser, url: str, ready: str, pid: int, viewport: dict, throttle: float) -> dict:
    page = browser.new_page(viewport=viewport)
    page.set_default_timeout(SETTLE_S * 1000)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
    cdp.send("Network.enable")
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": throttle})
    received = []
    cdp.on("Network.loadingFinished", lambda e: received.append(e.get("encodedDataLength", 0)))
    page.add_init_script(f"({WATCH_READY})({json.dumps(ready)})")
    metric = lambda: {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}  # noqa: E731
    m0, cpu0 = metric()["TaskDuration"], server_cpu_s(pid)
    page.goto(url, wait_until="commit")
    page.wait_for_function("() => window.__ready !== undefined", polling=100)
    # settled: the main thread quiet for QUIET_FOR_S
    last, quiet_since, deadline = metric()["TaskDuration"], None, time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        page.wait_for_timeout(100)
        now = metric()["TaskDuration"]
        quiet_since = None if (now - last) * 1e3 >= QUIET_MS else (quiet_since or time.monotonic())
        last = now
        if quiet_since and time.monotonic() - quiet_since >= QUIET_FOR_S:
            break
    cpu1, m1 = server_cpu_s(pid), metric()
    out = dict(
        ready_s=page.evaluate("() => window.__ready") / 1e3,
        main_ms=(m1["TaskDuration"] - m0) * 1e3,
        kb=sum(received) / 1024,
        config_kb=page.evaluate("() => JSON.stringify(window.gradio_config).length") / 1024,
        nodes=int(m1["Nodes"]),
        server_cpu_ms=(cpu1 - cpu0) * 1e3,
        url=page.url,
    )
    page.close()
    return out


def quiet(pid: int, timeout_s: float = 300) -> None:
    """Until the server spends under 50 ms of CPU in a second."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        cpu0 = server_cpu_s(pid)
        time.sleep(1)
        if server_cpu_s(pid) - cpu0 < 0.05:
            return


def crowd(url: str, students: int) -> list[float]:
    """Each of `students` clients' time for the page (redirects followed, body read whole), all asked at once."""

    def one(_):
        t0 = time.monotonic()
        with urllib.request.urlopen(url, timeout=120) as r:
            r.read()
        return time.monotonic() - t0

    with concurrent.futures.ThreadPoolExecutor(students) as pool:
        return sorted(pool.map(one, range(students)))


def measure(kind: str, root: Path, opens: int, students: int, viewport: dict, throttle: float) -> dict:
    from playwright.sync_api import sync_playwright

    port = free_port()
    proc = start_app(port, root=root, OMP_NUM_THREADS="1")
    url = f"http://127.0.0.1:{port}/{LINK[kind]}"
    try:
        quiet(proc.pid)  # the app loads its model in the background once it answers: not an open's cost
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            open_once(browser, url, READY[kind], proc.pid, viewport, throttle)  # warm: the server's first page
            runs = [open_once(browser, url, READY[kind], proc.pid, viewport, throttle) for _ in range(opens)]
            browser.close()
        crowd(url, students)  # warm
        times = crowd(url, students)
        cpu0 = server_cpu_s(proc.pid)
        for _ in range(PAGE_GETS):
            crowd(url, 1)
        page_cpu_ms = (server_cpu_s(proc.pid) - cpu0) * 1e3 / PAGE_GETS
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    med = {k: round(statistics.median(r[k] for r in runs), 2) for k in runs[0] if k != "url"}
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    crowds = dict(crowd_p50_s=round(statistics.median(times), 3), crowd_p95_s=round(p95, 3))
    return med | dict(url=runs[0]["url"], page_cpu_ms=round(page_cpu_ms, 1)) | crowds


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout's app (before a change)")
    parser.add_argument("--opens", type=int, default=3)
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--viewport", default="390x844", help="WIDTHxHEIGHT")
    parser.add_argument("--throttle", type=float, default=4.0, help="CPU slowdown")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.viewport.split("x"))
    viewport = {"width": width, "height": height}
    out = {}
    with tempfile.TemporaryDirectory() as bare:
        (Path(bare) / "app.py").write_text(BARE_APP)
        apps = {"this": ("app", ROOT), "bare": ("bare", Path(bare))}
        if args.baseline:
            apps["baseline"] = ("app", args.baseline.resolve())
        for name, (kind, root) in apps.items():
            out[name] = measure(kind, root, args.opens, args.students, viewport, args.throttle)
            print(f"{name:>9}: {json.dumps(out[name])}", file=sys.stderr, flush=True)
    return dict(
        viewport=args.viewport,
        throttle=args.throttle,
        opens=args.opens,
        load_average=[round(x, 2) for x in os.getloadavg()],
        apps={name: str(root) for name, (_, root) in apps.items()},
        results=out,
    )


if __name__ == "__main__":
    print(json.dumps(main()))
