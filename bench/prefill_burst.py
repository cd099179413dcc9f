"""A class's first Prefill, burst after burst: N students on one preset press Prefill at the same instant.

`bench/classroom_load.py --same-prompt` gives one burst per run, so one first-Prefill p50 per three-minute run, and
those spread by up to 2x between runs. This presses `--bursts` bursts against one running app, each with N new
sessions (their pages opened first, as the page shows what the model reads), and reports each burst's p50, its
first and last answer, and the CPU the server and this process (the simulated students: on the same cores here,
not in a classroom) used per Prefill. The prompt is cached from the warm-up on, so every press is what a class gets
after its first student: a copy from the prefix cache, the handler's view and gradio's event.
Prints one JSON object as its last line.

    .venv/bin/python bench/prefill_burst.py [--students 30] [--bursts 8] [--url URL --server-pid PID | --port 7869]
"""

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.classroom_load import PAGE, Student, cpu_seconds, percentile, prompt_for  # noqa: E402
from ui.context import RAW  # noqa: E402
from ui.launch import start_app  # noqa: E402


def burst(url: str, students: int, downloads: str, pid: int | None) -> dict:
    """One burst: `students` new sessions press Prefill at once; each one's wait, in ms, and the CPU used."""
    with ThreadPoolExecutor(max_workers=students) as pool:
        class_ = list(pool.map(lambda i: Student(url, i, downloads, prompt=prompt_for(0)), range(students)))
        start = threading.Barrier(students)

        def press(student: Student) -> float:
            start.wait()
            t0 = time.perf_counter()
            student.call(student.prefill_api, None, student.prompt, RAW, 0, 3, "", PAGE)
            return (time.perf_counter() - t0) * 1e3

        cpu0, own0 = cpu_seconds(pid), time.process_time()
        waits = list(pool.map(press, class_))
        cpu1, own1 = cpu_seconds(pid), time.process_time()
        list(pool.map(lambda s: s.client.predict(api_name="/reset"), class_))
    server = (cpu1 - cpu0) * 1e3 / students if cpu0 is not None and cpu1 is not None else float("nan")
    return {
        "p50_ms": round(percentile(waits, 0.5), 1),
        "first_ms": round(min(waits), 1),
        "last_ms": round(max(waits), 1),
        "server_cpu_ms_per_prefill": round(server, 1),
        "students_cpu_ms_per_prefill": round((own1 - own0) * 1e3 / students, 1),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--bursts", type=int, default=8)
    parser.add_argument("--pause-s", type=float, default=2.0, help="between bursts: the server settles")
    parser.add_argument("--url", default=None, help="a running app; otherwise one is started on --port")
    parser.add_argument("--server-pid", type=int, default=None, help="with --url: the app's process, for its CPU")
    parser.add_argument("--port", type=int, default=7869)
    args = parser.parse_args(argv)
    proc = None if args.url else start_app(args.port)
    try:
        url = args.url or f"http://127.0.0.1:{args.port}/"
        pid = args.server_pid if proc is None else proc.pid
        downloads = tempfile.mkdtemp(prefix="prefill-burst-")
        Student(url, 0, downloads, prompt=prompt_for(0)).run(2).finish()  # warm-up: the prompt is cached from now on
        bursts = []
        for _ in range(args.bursts):
            time.sleep(args.pause_s)
            bursts.append(burst(url, args.students, downloads, pid))
            print(json.dumps(bursts[-1]), file=sys.stderr)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    median = {key: round(statistics.median(b[key] for b in bursts), 1) for key in bursts[0]}
    print(json.dumps({"students": args.students, "bursts": len(bursts), "median_of_bursts": median, "each": bursts}))


if __name__ == "__main__":
    main()
