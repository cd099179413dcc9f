"""The app with every Python thread under cProfile, timed in each thread's own CPU time, so the profile says where the
server's CPU goes (gradio's event loop, its worker threads, the scheduler's forward passes), not where threads wait.
SIGTERM or SIGINT writes the merged profile to PATH (pstats format) and a text summary beside it, then exits.

    .venv/bin/python bench/profiled_app.py PATH [app.py's arguments, e.g. --port 7931]
    .venv/bin/python bench/classroom_load.py --url http://127.0.0.1:7931/ --server-pid PID ...   # then kill -TERM PID
    .venv/bin/python -c "import pstats; pstats.Stats('PATH').sort_stats('tottime').print_stats(40)"

Under the profiler every Python call costs more, so its totals are inflated; its shares are what to read."""

import contextlib
import cProfile
import io
import os
import pstats
import runpy
import signal
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILES: list[cProfile.Profile] = []


def _profiled(bootstrap):
    """Thread._bootstrap_inner, which runs every thread's `run` (a subclass's own too: anyio's worker threads, where
    gradio runs the handlers), under a profile of the thread's own."""

    def wrapped(self):
        profile = cProfile.Profile(time.thread_time)
        PROFILES.append(profile)
        profile.enable()
        try:
            bootstrap(self)
        finally:
            profile.disable()

    return wrapped


def _write(path: Path) -> None:
    for p in PROFILES:
        p.disable()  # the calling thread's; the others' data is read as it stands
    stats = pstats.Stats(PROFILES[0])
    for p in PROFILES[1:]:
        with contextlib.suppress(TypeError):  # a thread that never ran a profiled call
            stats.add(p)
    stats.dump_stats(str(path))
    text = io.StringIO()
    pstats.Stats(str(path), stream=text).sort_stats("tottime").print_stats(60)
    pstats.Stats(str(path), stream=text).sort_stats("cumulative").print_stats(80)
    path.with_suffix(".txt").write_text(text.getvalue(), encoding="utf-8")


def main() -> None:
    path, sys.argv = Path(sys.argv[1]), ["app.py", *sys.argv[2:]]
    threading.Thread._bootstrap_inner = _profiled(threading.Thread._bootstrap_inner)
    main_profile = cProfile.Profile(time.thread_time)
    PROFILES.append(main_profile)

    def stop(signum, frame):
        _write(path)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    main_profile.enable()
    runpy.run_path(str(ROOT / "app.py"), run_name="__main__")


if __name__ == "__main__":
    main()
