"""A classroom at once: N students, each in their own browser session, prefill a different prompt and step.

Starts the app (`python app.py --port P`) or connects to `--url`, then drives it with N concurrent simulated
students, one session each: prefill a different prompt (greedy, temperature 0, so the tokens are
deterministic), then press Step S times, as fast as the answers come (the worst case), or after a pause to read
each answer, the prefill's too (`--think-ms`, varied by +-50% per click so the class drifts apart). The clicks
are sent as the page sends them (bench/page_calls.py), so the simulated class takes little of the server's CPU
(`students_cpu_share` says how much).
Step latency is what the student sees: one model queue serialises every session, so it includes the wait
behind the others. Afterwards each student's trace is downloaded, their run released (Reset), and the same
runs are done again alone, one after another: a student whose tokens differ is a mismatched session (state
leaking between sessions). A warm-up run comes first and is not counted. With `--long-runner` one more session
presses Run to end on 200 tokens while the class steps. The server's own tick log (`/traffic`) gives the batch
sizes its forward passes had. When the benchmark starts the app itself, it also starts a second one with batching off
(DECODING_LAB_BATCHING=0: each request runs the model on its own) and times one student alone on each, their runs
interleaved: `alone_vs_solo_path` is what the scheduler costs a student who is alone.
With `--same-prompt` every student prefills the one prompt, as a class pressing the same preset does: the server's
prefix cache (decoding/serving/prefix.py) computes it once; `--no-prefix-cache` starts the app with it off
(DECODING_LAB_PREFIX_MB=0), for the same class without it. The server's prefix-cache numbers come with its traffic.
With `--long-prefill N` the class steps as fast as it can while one more session prefills an N-token prompt in the
middle of the run: the Step latencies that overlapped that Prefill against those that did not (`p95_ratio`).
With `--through URL` the class goes through a lecture hall's proxy (`make hall`: HAProxy in front of several app
processes): each student opens the page first, as a browser does, and keeps the cookie that names its replica, so
every later click goes there; the result says how the class spread over the replicas (`replicas`). The traffic
numbers are then one replica's.
With `--round` the class plays a round of the Sample together tab instead (bench/class_round.py): it joins a
teacher's round, guesses, draws (`--draws` each) and steps greedy together, while a projector polls the round; it
reports Draw latencies, whether the projector's counts equal the draws, the projector's lag and the chi-square test
of the draws, and greedy together's verdict.
Prints one JSON object as its last line.

    .venv/bin/python bench/classroom_load.py [--students 30] [--steps 20] [--think-ms 0] [--long-runner]
                                             [--same-prompt] [--no-prefix-cache] [--threads N]
                                             [--round [--draws 10] [--idle-s 20]] [--long-prefill 5000]
                                             [--url URL | --through URL | --port 7867]
"""

import argparse
import json
import os
import random
import re
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from gradio_client import Client  # noqa: E402

from bench.class_round import class_round  # noqa: E402
from bench.page_calls import PageCaller, first_request, pinned  # noqa: E402
from decoding.serving.students import TOPICS  # noqa: E402
from deploy.hall import COOKIE  # noqa: E402
from ui.context import RAW  # noqa: E402
from ui.launch import start_app  # noqa: E402
from ui.step.page_state import KNOB_FIELDS, written  # noqa: E402

GREEDY = [0.0, 0, 1.0, 0.0, 1.0, 0.0, 0.0, "transformers"]  # temperature .. frequency, engine order
# what a click reads from the page, as the page's script writes it: greedy, "each strategy alone" off screen (at
# 1280x720 it is below the fold, so a student's Step does not draw it)
PAGE = written(dict(zip(KNOB_FIELDS, GREEDY)), on_screen="")
# the stop line once the run has stopped (visuals.step.sequence.stop_html), as the answer's JSON escapes it (a patch's
# text is JSON in JSON: its quotes come escaped twice)
STOPPED = re.compile(r'data-stop=\\*"[^"\\]')
# the click's time in its handler, from taking the session's run to its answer built (ui/step/view.py, `_numbers`)
SERVER_MS = re.compile(r"id='server-ms'>([0-9.]+)<")


def prompt_for(i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return f"Here is one fact about {topic}" + (f" (number {i // len(TOPICS) + 1})" if i >= len(TOPICS) else "") + ":"


def prefill_endpoint(client: Client) -> str:
    """The step tab's Prefill: `/prefill` once the event is named, else the endpoint that takes seed and stops."""
    named = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    if "/prefill" in named:
        return "/prefill"
    for name, endpoint in named.items():
        params = {p["parameter_name"] for p in endpoint["parameters"]}
        if {"message", "seed", "max_new", "stops"} <= params:
            return name
    raise RuntimeError("the app exposes no Prefill endpoint (an event with message, seed, max_new and stops)")


def side_endpoint(client: Client) -> str | None:
    """The panels a browser asks for after each step (`/step_side`), when the app names that event."""
    named = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    return "/step_side" if "/step_side" in named else None


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time a process has used so far (Linux), or None where it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError, TypeError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Student:
    """One browser session: its own Client, so its own run id on the server."""

    def __init__(
        self,
        url: str,
        index: int,
        downloads: str,
        think_ms: float = 0.0,
        prompt: str | None = None,
        through: bool = False,
    ):
        self.think_s, self.rng = think_ms / 1e3, random.Random(index)
        self.replica, headers = None, {}
        if through:  # a lecture hall: the first request gets the cookie that names the replica it came from
            self.replica, headers = pinned(url)
        # a class opening the page at once on a busy server: the API description can take longer than httpx's 5 s
        self.client = Client(
            url,
            verbose=False,
            analytics_enabled=False,
            download_files=downloads,
            httpx_kwargs={"timeout": 120},
            headers=headers,
        )
        self.call = PageCaller(self.client)  # the timed clicks, sent as the page sends them
        self.prompt, self.prefill_api = prompt or prompt_for(index), prefill_endpoint(self.client)
        self.side_api = side_endpoint(self.client)
        # the page, once open, shows what the model will read: its session exists before the first Prefill
        self.call("/prompt_view", None, self.prompt, RAW)
        self.prefill_ms, self.step_ms, self.side_ms, self.errors = 0.0, [], [], []
        self.handler_ms: list[float] = []  # each Step's time in its handler, as the page shows it
        self.trace: dict = {}

    def run(self, steps: int, start: threading.Barrier | None = None) -> "Student":
        try:
            if start is not None:
                start.wait()
            t0 = time.perf_counter()
            model_args = (None, self.prompt, RAW, 0, steps, "", PAGE)  # None: the app's own model
            self.call(self.prefill_api, *model_args)
            self.prefill_ms = (time.perf_counter() - t0) * 1e3
            time.sleep(self.think_s * self.rng.uniform(0.5, 1.5))  # the first distribution is read too
            for _ in range(steps):
                t0 = time.perf_counter()
                out = self.call("/step", PAGE)
                self.step_ms.append((time.perf_counter() - t0) * 1e3)
                if out[-1]:  # the step tab says what went wrong in its message line, as a student would read it
                    raise RuntimeError(out[-1])
                if self.side_api:  # the panels under the chart, which the page asks for once the step is drawn
                    t0 = time.perf_counter()
                    self.call(self.side_api, *GREEDY)
                    self.side_ms.append((time.perf_counter() - t0) * 1e3)
                if served := SERVER_MS.search(json.dumps(out)):
                    self.handler_ms.append(float(served.group(1)))
                if STOPPED.search(json.dumps(out[0])):  # an early end of sequence: nothing more to step
                    break
                time.sleep(self.think_s * self.rng.uniform(0.5, 1.5))
        except Exception as err:  # a student who sees an error stops, as a person would
            self.errors.append(f"{type(err).__name__}: {err}")
        return self

    def finish(self) -> "Student":
        """Download the run's trace and release it (Reset). Kept out of `run`, so out of the timed class: a
        gradio_client call polls every 50 ms, and thirty of them would load the machine the server runs on."""
        try:
            json_path = self.client.predict(api_name="/save_trace")[0]
            self.trace = json.loads(Path(json_path).read_text(encoding="utf-8"))
            self.client.predict(api_name="/reset")
        except Exception as err:  # noqa: BLE001 -- reported with the student's other errors
            self.errors.append(f"{type(err).__name__}: {err}")
        return self

    @property
    def tokens(self) -> list[int]:
        return self.trace.get("token_ids", [])


def decoded(class_: list[Student]) -> list[dict]:
    """The decode steps of the class's traces (the prompt's pass left out)."""
    return [step for s in class_ for step in s.trace.get("steps", []) if step.get("phase") == "decode"]


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


LONG_PROMPT = "Once upon a time, in a small village by the sea,"


def long_run(url: str, downloads: str, start: threading.Barrier, tokens: int = 200) -> dict:
    """One more session: Prefill, then Run to end on `tokens` tokens, while the class steps."""
    student = Student(url, len(TOPICS), downloads)
    student.prompt = LONG_PROMPT  # greedy, it writes all 200 tokens (no end-of-sequence on the way)
    start.wait()
    t0 = time.perf_counter()
    try:
        student.call(student.prefill_api, None, student.prompt, RAW, 0, tokens, "", PAGE)
        student.call("/run_to_end", PAGE)
    except Exception as err:  # noqa: BLE001 -- reported, like a student's error
        return {"long_runner_error": f"{type(err).__name__}: {err}"}
    trace = json.loads(Path(student.client.predict(api_name="/save_trace")[0]).read_text(encoding="utf-8"))
    student.client.predict(api_name="/reset")
    return {"long_runner_seconds": round(time.perf_counter() - t0, 1), "long_runner_tokens": len(trace["token_ids"])}


LONG_SENTENCE = "the cat sat on the mat. "  # 7 tokens of the bundled model's tokenizer; 17,100 characters for 5,000
CLASS_MAX_NEW = 400  # each student's run during the long prefill: re-prefilled when it ends


def long_text(tokens: int) -> str:
    return LONG_SENTENCE * max(1, tokens // 7)


def stepping(student: Student, stop: threading.Event, start: threading.Barrier) -> list[tuple[float, float]]:
    """A student stepping as fast as the answers come until `stop` (a new Prefill, not timed, when the run ends):
    (start, end) of each Step."""
    times = []
    try:
        start.wait()
        while not stop.is_set():
            student.call(student.prefill_api, None, student.prompt, RAW, 0, CLASS_MAX_NEW, "", PAGE)
            for _ in range(CLASS_MAX_NEW):
                if stop.is_set():
                    break
                t0 = time.perf_counter()
                out = student.call("/step", PAGE)
                times.append((t0, time.perf_counter()))
                if out[-1]:
                    raise RuntimeError(out[-1])
                if student.side_api:  # as `Student.run`: the panels a page asks for after each step
                    student.call(student.side_api, *GREEDY)
                if STOPPED.search(json.dumps(out[0])):
                    break
    except Exception as err:  # noqa: BLE001 -- reported with the class's errors
        student.errors.append(f"{type(err).__name__}: {err}")
    return times


def long_prefill_beside(url: str, students: int, tokens: int, before_s: float = 10.0, after_s: float = 5.0) -> dict:
    """A class stepping as fast as it can, and one more session's Prefill of a `tokens`-token prompt in the middle:
    the Step latencies of the steps that overlapped that Prefill against those that did not, in one run."""
    downloads = tempfile.mkdtemp(prefix="classroom-long-")
    warm = Student(url, 0, downloads, prompt="Warming up:")
    warm.run(2).finish()
    stop, start = threading.Event(), threading.Barrier(students + 1)
    with ThreadPoolExecutor(max_workers=students + 1) as pool:
        class_ = list(pool.map(lambda i: Student(url, i, downloads), range(students)))
        long = Student(url, len(TOPICS) + 1, downloads, prompt=long_text(tokens))
        futures = [pool.submit(stepping, s, stop, start) for s in class_]
        start.wait()
        time.sleep(before_s)  # the class steps alone for a while: the steps without the long prefill
        began = time.perf_counter()
        try:
            long.call(long.prefill_api, None, long.prompt, RAW, 0, 16, "", PAGE)
        except Exception as err:  # noqa: BLE001 -- reported, like a student's error
            long.errors.append(f"{type(err).__name__}: {err}")
        ended = time.perf_counter()
        time.sleep(after_s)  # and again after it
        stop.set()
        times = [t for f in futures for t in f.result()]
    prompt_tokens = len(long.finish().trace.get("prompt_ids", []))
    beside = [(b - a) * 1e3 for a, b in times if a < ended and b > began]
    alone = [(b - a) * 1e3 for a, b in times if not (a < ended and b > began)]
    p95_beside, p95_alone = percentile(beside, 0.95), percentile(alone, 0.95)
    errors = [e for s in class_ for e in s.errors] + long.errors
    return {
        "students": students,
        "long_prefill_tokens": prompt_tokens,
        "long_prefill_s": round(ended - began, 1),
        "steps_beside": len(beside),
        "steps_without": len(alone),
        "p50_step_ms_without": round(percentile(alone, 0.50), 1),
        "p95_step_ms_without": round(p95_alone, 1),
        "p50_step_ms_beside": round(percentile(beside, 0.50), 1),
        "p95_step_ms_beside": round(p95_beside, 1),
        "max_step_ms_beside": round(max(beside, default=float("nan")), 1),
        "p95_ratio": round(p95_beside / p95_alone, 2) if alone and beside else None,
        "errors": len(errors),
        "error_messages": errors[:5],
        "cpu_count": os.cpu_count(),
        **traffic(url),
    }


def replicas_of(url: str, tries: int = 16) -> set[str]:
    """The replicas a lecture hall's proxy hands new browsers to (each page opened without a cookie gets the next)."""
    seen = set()
    for _ in range(tries):
        with httpx.Client(timeout=120) as page:
            page.get(first_request(url)).raise_for_status()
            seen.add(page.cookies.get(COOKIE))
    return seen - {None}


def traffic(url: str) -> dict:
    """The server's tick log over the last minute (batch sizes of its forward passes), if it has a scheduler."""
    try:
        numbers = Client(url, verbose=False, analytics_enabled=False).predict(api_name="/traffic")
    except Exception as err:  # noqa: BLE001 -- an app without the batching tab
        return {"traffic_error": str(err)}
    keep = ("ticks", "mean_rows", "rows_histogram", "tokens_per_s", "busy", "noise", "prefix")
    return {f"server_{k}": numbers.get(k) for k in keep} if numbers.get("scheduler") else {"server_scheduler": False}


def classroom(
    url: str,
    students: int,
    steps: int,
    think_ms: float = 0.0,
    long_runner: bool = False,
    pid: int | None = None,
    same_prompt: bool = False,
    through: bool = False,
) -> dict:
    downloads = tempfile.mkdtemp(prefix="classroom-")
    # warm-up: the model load and first-call costs are not counted (a prompt no student uses, so none is cached);
    # through a hall, one warm-up per replica (the proxy hands new browsers to each in turn)
    for _ in range(len(replicas_of(url)) if through else 1):
        Student(url, 0, downloads, prompt="Warming up:", through=through).run(2).finish()
    extra = {}
    prompt = prompt_for(0) if same_prompt else None
    with ThreadPoolExecutor(max_workers=students + 1) as pool:
        class_ = list(pool.map(lambda i: Student(url, i, downloads, think_ms, prompt, through), range(students)))
        start = threading.Barrier(students + int(long_runner))
        t0, cpu0, own0 = time.perf_counter(), cpu_seconds(pid), time.process_time()
        runner = pool.submit(long_run, url, downloads, start) if long_runner else None
        class_ = list(pool.map(lambda s: s.run(steps, start), class_))
        seconds, cpu1, own1 = time.perf_counter() - t0, cpu_seconds(pid), time.process_time()
        class_ = list(pool.map(Student.finish, class_))
        if runner is not None:
            extra = runner.result()
    extra |= traffic(url)
    if through:  # how the proxy spread the class: students per replica
        extra["replicas"] = dict(sorted(Counter(s.replica for s in class_).items()))
    extra["stream_reconnects"] = sum(s.call.reconnects for s in class_)  # event streams opened again (page_calls)
    # the same runs alone, one student after another, in one session
    alone = Student(url, 0, downloads, through=through)
    mismatched, alone_ms = 0, []
    for student in class_:
        alone.prompt, alone.step_ms, alone.trace = student.prompt, [], {}
        alone.run(steps).finish()
        alone_ms += alone.step_ms
        mismatched += int(not student.errors and (alone.errors or alone.tokens != student.tokens))
    step_ms = [ms for s in class_ for ms in s.step_ms]
    errors = [e for s in class_ for e in s.errors] + alone.errors
    first = next((s.trace for s in class_ if s.trace), {})
    side_ms = [ms for s in class_ for ms in s.side_ms]
    if cpu0 is not None and cpu1 is not None:  # the server's CPU time over the class, per request it answered
        clicks = len(step_ms) + sum(1 for s in class_ if s.prefill_ms)  # a Step's panels are part of its click
        requests = clicks + len(side_ms)
        extra["server_cpu_ms_per_request"] = round((cpu1 - cpu0) * 1e3 / max(1, requests), 1)
        extra["server_cpu_ms_per_click"] = round((cpu1 - cpu0) * 1e3 / max(1, clicks), 1)
        extra["server_cpu_share"] = round((cpu1 - cpu0) / seconds / (os.cpu_count() or 1), 3)
    # the simulated students' own share of the machine: real students' browsers run on their own laptops
    extra["students_cpu_share"] = round((own1 - own0) / seconds / (os.cpu_count() or 1), 3)
    return {
        "students": students,
        "steps": steps,
        "think_ms": think_ms,
        "errors": len(errors),
        "mismatched_sessions": mismatched,
        "p50_step_ms": round(percentile(step_ms, 0.50), 1),
        "p95_step_ms": round(percentile(step_ms, 0.95), 1),
        "max_step_ms": round(max(step_ms, default=float("nan")), 1),
        # the first Step after the class's Prefill (pressed together, each after one think time), and the rest
        "p95_first_step_ms": round(percentile([s.step_ms[0] for s in class_ if s.step_ms], 0.95), 1),
        "p95_later_steps_ms": round(percentile([ms for s in class_ for ms in s.step_ms[1:]], 0.95), 1),
        # of a Step's wait, the part in its handler (the tick's pass included); the rest is the way there and back
        "p50_step_handler_ms": round(percentile(handler := [ms for s in class_ for ms in s.handler_ms], 0.50), 1),
        "p95_step_handler_ms": round(percentile(handler, 0.95), 1),
        # of that, the forward pass each step was chosen from (its tick's, shared with the tick's other rows)
        "p50_step_pass_ms": round(percentile(passes := [st["forward_ms"] for st in decoded(class_)], 0.50), 1),
        "p95_step_pass_ms": round(percentile(passes, 0.95), 1),
        "side_panels": bool(side_ms),
        "p50_side_ms": round(percentile(side_ms, 0.50), 1),
        "p50_prefill_ms": round(percentile([s.prefill_ms for s in class_ if s.prefill_ms], 0.50), 1),
        "alone_p50_step_ms": round(percentile(alone_ms, 0.50), 1),
        "steps_done": len(step_ms),
        "seconds": round(seconds, 1),
        "device": first.get("device"),
        "model": first.get("model_id"),
        "cpu_count": os.cpu_count(),
        "error_messages": errors[:5],
        "long_runner": long_runner,
        "same_prompt": same_prompt,
        **extra,
    }


def alone_vs_solo_path(url: str, port: int, steps: int, rounds: int = 3, **env: str) -> dict:
    """One student alone on this app (steps through the scheduler) and one on a second app with batching off (each
    request runs the model itself), their runs interleaved so both see the machine in the same state."""
    proc = start_app(port, **{**env, "DECODING_LAB_BATCHING": "0"})
    try:
        solo_url, downloads = f"http://127.0.0.1:{port}/", tempfile.mkdtemp(prefix="classroom-solo-")
        Student(solo_url, 0, downloads).run(2).finish()  # warm-up
        ms = {"scheduler": [], "solo": []}
        for i in range(rounds):
            ms["scheduler"] += Student(url, i, downloads).run(steps).finish().step_ms
            ms["solo"] += Student(solo_url, i, downloads).run(steps).finish().step_ms
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    alone, solo = percentile(ms["scheduler"], 0.50), percentile(ms["solo"], 0.50)
    return {
        "alone_interleaved_p50_step_ms": round(alone, 1),
        "solo_path_p50_step_ms": round(solo, 1),
        "alone_vs_solo_path": round(alone / solo, 3),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--think-ms", type=float, default=0.0, help="pause after each answer, as a reader would")
    parser.add_argument("--url", default=None, help="a running app; otherwise one is started on --port")
    parser.add_argument("--through", default=None, help="a lecture hall's proxy (make hall): students stick by cookie")
    parser.add_argument("--port", type=int, default=7867)
    parser.add_argument("--long-runner", action="store_true", help="one more session runs 200 tokens to the end")
    parser.add_argument("--server-pid", type=int, default=None, help="with --url: the app's process, for its CPU time")
    parser.add_argument("--same-prompt", action="store_true", help="every student prefills one prompt, as a class")
    parser.add_argument("--no-prefix-cache", action="store_true", help="start the app with its prefix cache off")
    parser.add_argument("--threads", type=int, default=None, help="OMP_NUM_THREADS for the app it starts")
    parser.add_argument("--round", action="store_true", help="the class plays a Sample together round instead")
    parser.add_argument("--draws", type=int, default=10, help="with --round: draws each student makes")
    parser.add_argument("--idle-s", type=float, default=20.0, help="with --round: seconds the pages only poll")
    parser.add_argument(
        "--long-prefill", type=int, default=None, help="one more session prefills a prompt of this many tokens"
    )
    args = parser.parse_args(argv)
    env = {"DECODING_LAB_PREFIX_MB": "0"} if args.no_prefix_cache else {}
    if args.threads is not None:  # torch's intra-op threads in the server (its default: one per core)
        env["OMP_NUM_THREADS"] = str(args.threads)
    proc = None if args.url or args.through else start_app(args.port, **env)
    try:
        url = args.through or args.url or f"http://127.0.0.1:{args.port}/"
        pid = args.server_pid if proc is None else proc.pid
        if args.round:
            cores = os.cpu_count() or 1
            result = class_round(
                url, args.students, args.draws, args.think_ms, pid, cpu_seconds, cores, args.idle_s, bool(args.through)
            )
            print(
                f"{result['students']} students x {result['draws_each']} draws: draw p50 {result['p50_draw_ms']} ms, "
                f"p95 {result['p95_draw_ms']} ms; errors {result['errors']}; counted {result['draws_counted']} of "
                f"{result['draws_made']} (equal: {result['counts_equal']}); projector lag p95 "
                f"{result['p95_projector_lag_ms']} ms; chi-square {result['chi_square']}; {result['greedy_verdict']}",
                file=sys.stderr,
            )
            print(json.dumps(result))
            return
        if args.long_prefill:
            result = long_prefill_beside(url, args.students, args.long_prefill)
            print(
                f"{args.students} students beside a {result['long_prefill_tokens']}-token Prefill "
                f"({result['long_prefill_s']} s): step p95 {result['p95_step_ms_beside']} ms beside it, "
                f"{result['p95_step_ms_without']} ms without (x{result['p95_ratio']}); errors {result['errors']}",
                file=sys.stderr,
            )
            print(json.dumps(result))
            return
        result = classroom(
            url, args.students, args.steps, args.think_ms, args.long_runner, pid, args.same_prompt, bool(args.through)
        )
        result["prefix_cache"], result["server_threads"] = not args.no_prefix_cache, args.threads
        if proc is not None:
            result |= alone_vs_solo_path(url, args.port + 1, args.steps, **env)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    print(
        f"{result['students']} students x {result['steps']} steps: step p50 {result['p50_step_ms']} ms, "
        f"p95 {result['p95_step_ms']} ms (alone {result['alone_p50_step_ms']} ms); errors {result['errors']}, "
        f"mismatched {result['mismatched_sessions']}; batch sizes {result.get('server_rows_histogram')}",
        file=sys.stderr,
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
