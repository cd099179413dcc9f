"""The Prefill event's CPU in-process, by part: a class presses one preset, each student in a session of their own,
through gradio's own preprocess and postprocess (`Blocks.process_api`: no HTTP, no event stream). The prefix cache
answers every prompt after the warm-up's.

`--sessions` presses one session after another (no queue, so no wait is counted), timed in the process's CPU time
(every thread's: the handler's, the scheduler's copies, torch's); then `--sessions` presses at once (a class at the
bell), timed as each session waits for its answer. With `--profile PATH` the same run is under cProfile, each thread
in its own CPU time (as bench/profiled_app.py), the warm-up left out; its top entries by cumulative and by own time
are printed. The profiler makes every Python call dearer: read its shares, and the milliseconds of a run without it.

    .venv/bin/python bench/prefill_profile.py [--sessions 30] [--profile PATH] [--lines 40]
"""

import argparse
import asyncio
import contextlib
import cProfile
import io
import json
import pstats
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gradio as gr  # noqa: E402

from bench.classroom_load import PAGE, prompt_for  # noqa: E402
from bench.profiled_app import PROFILES, _profiled  # noqa: E402
from ui.context import RAW, AppConfig  # noqa: E402
from ui.kit.session_state import LazySessionState as SessionState  # noqa: E402 -- the app's (ui.kit.install)
from ui.step import links  # noqa: E402
from ui.step.page import layout  # noqa: E402
from ui.step.tab import wire  # noqa: E402


def prefill_event(demo: gr.Blocks, page):
    """The Prefill event and its inputs' values (the states come from each session's own `SessionState`)."""
    event = next(fn for fn in demo.fns.values() if fn.api_name == "prefill")
    given = {page.prompt: prompt_for(0), page.template: RAW, page.seed: 0, page.max_new: 3, page.stops: ""}
    given |= {page.model: None, page.page: PAGE}  # the page's box: its knobs (greedy) and what is on screen
    return event, [None if c.stateful else given.get(c, c.value) for c in event.inputs]


async def press(demo: gr.Blocks, event, inputs: list, state: SessionState) -> None:
    out = await demo.process_api(block_fn=event, inputs=inputs, state=state)
    if any(isinstance(v, str) and "lab-error" in v for v in out["data"]):
        raise RuntimeError(f"the Prefill failed: {out['data']}")


async def run(sessions: int, profiling: bool) -> dict:
    with gr.Blocks() as demo:
        config = AppConfig()
        page = layout(config, links.open_link(config, None))  # as the app builds it (ui.step.tab.build)
        wire(page, config)
    event, inputs = prefill_event(demo, page)
    for _ in range(3):  # warm-up: the model's load, the scheduler's calibration, the first computation of the prompt
        await press(demo, event, inputs, SessionState(demo))
    if profiling:
        for p in list(PROFILES):  # every thread is idle now: the warm-up is left out
            p.clear()
    cpu_ms = []
    for _ in range(sessions):
        state = SessionState(demo)  # a new student: the page's session exists before the press
        start = time.process_time()
        await press(demo, event, inputs, state)
        cpu_ms.append((time.process_time() - start) * 1e3)
    states = [SessionState(demo) for _ in range(sessions)]
    t0, cpu0 = time.perf_counter(), time.process_time()

    async def one(state) -> float:
        await press(demo, event, inputs, state)
        return (time.perf_counter() - t0) * 1e3

    burst_ms = await asyncio.gather(*(one(s) for s in states))
    return {
        "sessions": sessions,
        "profiled": profiling,
        "prefill_event_cpu_ms_median": round(statistics.median(cpu_ms), 2),
        "prefill_event_cpu_ms_mean": round(statistics.mean(cpu_ms), 2),
        "burst_cpu_ms_per_press": round((time.process_time() - cpu0) * 1e3 / sessions, 2),
        "burst_p50_ms": round(statistics.median(burst_ms), 1),
        "burst_max_ms": round(max(burst_ms), 1),
    }


def report(path: str, lines: int) -> None:
    for p in PROFILES:
        p.disable()
    stats = None
    for p in PROFILES:
        with contextlib.suppress(TypeError):  # a thread that never ran a profiled call
            stats = pstats.Stats(p) if stats is None else stats.add(p) or stats
    stats.dump_stats(path)
    text = io.StringIO()
    stats.stream = text
    stats.sort_stats("cumulative").print_stats(lines)
    stats.sort_stats("tottime").print_stats(lines)
    print(text.getvalue())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--profile", default=None, help="profile every thread; the merged profile goes here")
    parser.add_argument("--lines", type=int, default=40)
    args = parser.parse_args(argv)
    if args.profile:
        threading.Thread._bootstrap_inner = _profiled(threading.Thread._bootstrap_inner)  # before any thread starts
        PROFILES.append(cProfile.Profile(time.thread_time))
        PROFILES[-1].enable()
    result = asyncio.run(run(args.sessions, bool(args.profile)))
    if args.profile:
        report(args.profile, args.lines)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
