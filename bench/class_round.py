"""A class round under load (`bench/classroom_load.py --round`): a teacher's session starts a round on the Sample
together tab, N simulated students (one gradio session each, clicks sent as the page sends them: bench/page_calls.py)
join it, guess, draw and step greedy together, while a projector follows the round as the teacher's page does (its
script asks the round's version every quarter second, and its view when that changed).

Each student's page asks after the round every 3 s with its seat's ping, as a page does (a seat not heard from is
counted out, its draws with it), and presses Draw no faster than a person can (the round refuses more than
`DRAWS_PER_S` a second). The round's numbers are read with the teacher's key, as only the teacher may before the
reveal.

It reports what a student waits for (Draw, guess and greedy step latencies), errors, whether the projector's counts
equal the draws the students were shown (its total, and each token's bar), how long after a student's draw the
projector showed it, the chi-square test of the students' seeded draws against the processed probabilities (and
after "Draw 100 each"), greedy together's verdict from the scheduler's real passes, and the server's CPU share while
the class draws and while the pages only wait (the projector asking every quarter second, each student's page every
3 s).
"""

import contextlib
import html
import json
import random
import re
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
from gradio_client import Client

from bench.page_calls import PageCaller, pinned
from decoding.classround.chisquare import chi_square
from decoding.classround.greedy import LENGTH
from decoding.classround.round import DRAWS_PER_S
from ui.classround.script import PROJECTOR_EVERY_MS, STUDENT_EVERY_MS
from ui.classround.shown import ROUTE

PROMPT = "The best pet is a"  # the tab's first preset: three tokens near a tie
OFF = (1.0, 0, 1.0, 0.0)  # temperature, top-k, top-p, min-p: the lab's pipeline with every stage off
GUESSES = ("cat", "dog", "pet", "fish", "horse", "bird")
PROJECTOR_EVERY_S, STUDENT_EVERY_S = PROJECTOR_EVERY_MS / 1e3, STUDENT_EVERY_MS / 1e3
PRESS_S = 1.05 / DRAWS_PER_S  # a student's presses of Draw, at most: a little under the round's rate
ROOT_ATTRS = re.compile(r'<div class="classround-view"([^>]*)>')
ATTR = re.compile(r'data-([\w-]+)="([^"]*)"')
BAR = re.compile(r'data-series="([^"]*)" data-x="[^"]*" data-y="([^"]*)" data-c=\'([^\']*)\'')


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def root_attrs(value) -> dict:
    """The view's root attributes (data-total, data-serial, data-drew) a patched answer sets: from its whole HTML, or
    from its changes."""
    if not isinstance(value, dict):
        return {}
    if "html" in value:
        found = ROOT_ATTRS.search(value["html"])
        return dict(ATTR.findall(found.group(1))) if found else {}
    return {op[2][5:]: op[3] for op in value.get("ops", []) if op[0] == "attr" and op[1] == ".classround-view"}


def session(url: str, through: bool = False) -> PageCaller:
    """A page of its own: a gradio session, its clicks sent as the page sends them; `through` a lecture hall's proxy,
    kept on the replica its first request was given (`replica`: its name; `headers`: what keeps it there)."""
    replica, headers = pinned(url) if through else (None, {})
    # a class opening the page at once on a busy server: the API description can take longer than httpx's 5 s
    client = Client(url, verbose=False, analytics_enabled=False, httpx_kwargs={"timeout": 120}, headers=headers)
    return PageCaller(client, replica)


class Student:
    def __init__(self, url: str, index: int, think_ms: float, through: bool = False):
        self.call, self.rng, self.think_s = session(url, through), random.Random(index), think_ms / 1e3
        self.view: dict = {}  # the view's root attributes, as the page holds them
        self.choices: list[int] = []
        self.draw_ms, self.guess_ms, self.greedy_ms, self.errors = [], [], [], []
        self.drawn: list[tuple[int, int, float]] = []  # (token, the class's count with it, when the answer came)
        self.code = ""

    def timed(self, into: list, api: str, *args):
        t0 = time.perf_counter()
        try:
            out = self.call(api, *args)
        except Exception as err:  # noqa: BLE001 -- a student who sees an error stops, as a person would
            self.errors.append(f"{api}: {type(err).__name__}: {err}")
            return None
        into.append((time.perf_counter() - t0) * 1e3)
        if len(out) > 1 and out[-1]:  # the tab's message line: what went wrong, as a student reads it
            self.errors.append(f"{api}: {html.unescape(re.sub('<[^>]+>', '', out[-1]))}")
        self.view |= root_attrs(out[0])
        return out

    def join(self, code: str) -> None:
        self.code = code  # the page's code box: every student click sends it (ui/classround/tab.py)
        out = self.timed([], "/join", code)
        if out is not None and isinstance(out[0], dict) and "html" in out[0]:
            self.choices = re.findall(r'classround-choice[^"]*" data-key="(\d+:\d+)"', out[0]["html"])

    def guess(self, index: int) -> None:
        if index % 2 and self.choices:  # half pick one of the ten ("step:token id", as the page sends it)
            self.timed(self.guess_ms, "/pick", self.rng.choice(self.choices), self.code)
        else:
            self.timed(self.guess_ms, "/guess", self.rng.choice(GUESSES), self.code)

    def draws(self, n: int, start: threading.Barrier) -> None:
        start.wait()
        for _ in range(n):
            pressed = time.perf_counter()
            if self.timed(self.draw_ms, "/draw", self.code) is None:
                return
            self.drawn.append((int(self.view["drew"]), int(self.view["serial"]), time.perf_counter()))
            # a person presses again after a think, and never faster than DRAWS_PER_S
            pause = max(self.think_s * self.rng.uniform(0.5, 1.5), pressed + PRESS_S - time.perf_counter())
            time.sleep(max(0.0, pause))

    def greedy(self, steps: int, start: threading.Barrier) -> None:
        start.wait()
        for _ in range(steps):
            if self.timed(self.greedy_ms, "/greedy", self.code) is None:
                return
            time.sleep(self.think_s * self.rng.uniform(0.5, 1.5))


class Heard:
    """Every student's page asking after the round every 3 s with its seat's ping (ui/classround/script.py), from
    when they joined until the class ends: how the round hears each page is still open."""

    def __init__(self, url: str, code: str, class_: list[Student]):
        self.url, self.code, self.class_ = url.rstrip("/") + ROUTE, code, class_
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._ask, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *_):
        self._stop.set()
        self._thread.join()

    def _ask(self) -> None:
        with httpx.Client(timeout=60) as ask:
            while True:
                for student in self.class_:  # from the student's page: on its replica, where its seat's ping is known
                    seat = {"code": self.code, "seat": student.view.get("ping", "")}
                    ask.get(self.url, params=seat, headers=student.call.headers)
                    if self._stop.wait(STUDENT_EVERY_S / len(self.class_)):
                        return


class Projector:
    """The teacher's page as its script runs (ui/classround/script.py): every quarter second it asks the round's
    version (a plain GET), and when it changed it asks for its view (one gradio event); when each count was shown."""

    def __init__(self, url: str, code: str, call: PageCaller, kept: dict):
        self.call = PageCaller(call.client)  # the teacher's session, its own connection
        self.kept = kept  # what the teacher's page keeps: its refresh sends it
        self.ask, self.url, self.code = httpx.Client(timeout=60, headers=call.headers), url.rstrip("/") + ROUTE, code
        self.shown: list[tuple[float, int]] = []  # (when the view's answer came, the draws it showed)
        self.asked = self.refreshed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *_):
        self._stop.set()
        self._thread.join()
        self.ask.close()

    def _poll(self) -> None:
        total, seen = 0, None
        while not self._stop.wait(PROJECTOR_EVERY_S):
            version = self.ask.get(self.url, params={"code": self.code}).json()["version"]
            self.asked += 1
            if version == seen:
                continue
            attrs = root_attrs(self.call("/refresh", self.kept)[0])
            self.refreshed += 1
            total, seen = int(attrs.get("total", total)), int(attrs.get("version", version))
            self.shown.append((time.perf_counter(), total))

    def lag_ms(self, serial: int, at: float) -> float | None:
        """How long after a draw's answer (at `at`) the projector first showed a count that includes it."""
        first = next((t for t, total in self.shown if total >= serial), None)
        return None if first is None else max(0.0, first - at) * 1e3


def projector_page(call: PageCaller, kept: dict) -> str:
    """The projector's view as its page shows it now: its timer's answer, then the whole view (as a page that missed
    a change asks for it); `kept`: what the teacher's page keeps, which it sends."""
    call("/refresh", kept)
    return call("/resend")[0]["html"]


def projector_bars(call: PageCaller, kept: dict) -> dict[int, int]:
    """The projector's histogram as the page draws it: draws by token id (-1: the column of every less probable
    token)."""
    page = projector_page(call, kept)
    drawn = [
        (json.loads(c)[0], int(float(y))) for series, y, c in BAR.findall(page) if "draws" in html.unescape(series)
    ]
    return {token: n for token, n in drawn if n}


def cpu_share(cpu_seconds, pid, run, cores: int) -> tuple[float | None, float]:
    """The server's share of the machine's CPU while `run()` runs, and this process's own (the simulated pages')."""
    t0, c0, own0 = time.perf_counter(), cpu_seconds(pid), time.process_time()
    run()
    seconds, c1, own1 = time.perf_counter() - t0, cpu_seconds(pid), time.process_time()
    server = None if c0 is None or c1 is None else round((c1 - c0) / seconds / cores, 3)
    return server, round((own1 - own0) / seconds / cores, 3)


def class_round(
    url: str,
    students: int,
    draws: int,
    think_ms: float,
    pid,
    cpu_seconds,
    cores: int,
    idle_s: float,
    through: bool = False,
):
    """`through`: a lecture hall's proxy, each page kept on its replica by a cookie; the round is shared by them all
    (its Redis), the teacher on one replica and the class spread over every one."""
    # warm-up: the model, the tab's first events (not counted); through a hall, on each replica
    warm = session(url, through)
    code = warm("/start", None, PROMPT, False, "Sample together", *OFF)[0]["code"]
    warmed: set = set()
    for k in range(8 if through else 1):
        first = Student(url, 10_000 + k, 0, through)
        if first.call.replica in warmed:
            continue
        warmed.add(first.call.replica)
        first.join(code)
        first.timed([], "/draw")

    teacher = session(url, through)
    kept = teacher("/start", None, PROMPT, False, "Guess, then reveal", *OFF)[0]
    code = kept["code"]
    client = Client(url, verbose=False, analytics_enabled=False, headers=teacher.headers)

    def numbers() -> dict:
        return client.predict(code, kept["key"], api_name="/round_numbers")  # the teacher's key: the answers

    with ThreadPoolExecutor(max_workers=students) as pool, contextlib.ExitStack() as pages:
        class_ = list(pool.map(lambda i: Student(url, i, think_ms, through), range(students)))
        list(pool.map(lambda s: s.join(code), class_))
        pages.enter_context(Heard(url, code, class_))  # until the pages only wait (4), which asks as they do

        # 1) guess, then reveal
        list(pool.map(lambda k: class_[k].guess(k), range(students)))
        teacher("/reveal", kept)
        guessed = numbers()["guesses"]
        teacher("/advance", kept)  # the model's pick

        # 2) sample together: every student draws, the projector polls as the teacher's page does
        teacher("/kind", kept, "Sample together")
        start = threading.Barrier(students)
        with Projector(url, code, teacher, kept) as projector:
            drawing_cpu, pages_cpu = cpu_share(
                cpu_seconds, pid, lambda: list(pool.map(lambda s: s.draws(draws, start), class_)), cores
            )
            time.sleep(2 * PROJECTOR_EVERY_S)  # the projector's next polls, which show the last draws
        tally = numbers()["draw"]
        bars = projector_bars(teacher, kept)
        each = teacher("/draw_each", kept)
        after = numbers()["draw"]

        # 3) greedy together: every student's steps through the scheduler at once
        teacher("/kind", kept, "Greedy together")
        start = threading.Barrier(students)
        list(pool.map(lambda s: s.greedy(LENGTH, start), class_))
        greedy = numbers()["greedy"]
        verdict = re.search(r"Every token agreed|At step \d+ not every token agreed", projector_page(teacher, kept))

        # 4) the pages only wait: the projector asks every quarter second, each student's page every 3 s
        pages.close()
        waiting = idle_poll(url, code, class_, teacher, idle_s) if idle_s else None
        waiting_cpu, _ = (None, None) if waiting is None else cpu_share(cpu_seconds, pid, waiting, cores)
        # the same time with no page asking anything: what the server costs idle, for the difference
        baseline_cpu, _ = (
            (None, None) if waiting is None else cpu_share(cpu_seconds, pid, lambda: time.sleep(idle_s), cores)
        )
    teacher("/end", kept)

    drawn = [d for s in class_ for d in s.drawn]
    received = Counter(token for token, _, _ in drawn)
    shown_tokens = {t for t in bars if t >= 0}
    expected_bars = {t: n for t, n in received.items() if t in shown_tokens}
    others = sum(n for t, n in received.items() if t not in shown_tokens)
    if others:
        expected_bars[-1] = others
    lags = [lag for token, serial, at in drawn if (lag := projector.lag_ms(serial, at)) is not None]
    chi = chi_square(received, [(t, p) for t, p in tally["probs"]], tally["kept"])
    errors = [e for s in class_ for e in s.errors]
    draw_ms = [ms for s in class_ for ms in s.draw_ms]
    guess_ms = [ms for s in class_ for ms in s.guess_ms]
    greedy_ms = [ms for s in class_ for ms in s.greedy_ms]
    return {
        "mode": "round",
        "students": students,
        "draws_each": draws,
        "think_ms": think_ms,
        "errors": len(errors),
        "error_messages": errors[:5],
        "guessed": guessed["guessed"],
        "p50_guess_ms": round(percentile(guess_ms, 0.5), 1),
        "p95_guess_ms": round(percentile(guess_ms, 0.95), 1),
        "draws_made": len(drawn),
        "draws_counted": tally["total"],
        "projector_total": projector.shown[-1][1] if projector.shown else None,
        "counts_equal": {str(t): n for t, n in received.items()} == tally["counts"],
        "projector_bars_equal": bars == expected_bars,
        "p50_draw_ms": round(percentile(draw_ms, 0.5), 1),
        "p95_draw_ms": round(percentile(draw_ms, 0.95), 1),
        "max_draw_ms": round(max(draw_ms, default=float("nan")), 1),
        "p50_projector_lag_ms": round(percentile(lags, 0.5), 1),
        "p95_projector_lag_ms": round(percentile(lags, 0.95), 1),
        "max_projector_lag_ms": round(max(lags, default=float("nan")), 1),
        "projector_asks": projector.asked,
        "projector_refreshes": projector.refreshed,
        "chi_square": None if chi is None else {"statistic": round(chi.statistic, 2), "dof": chi.dof, "p": chi.p_value},
        "chi_square_fits_1pct": None if chi is None else chi.fits,
        "after_draw_100_each": {"total": after["total"], "chi": after["chi"], "answered": each[-1] == ""},
        "p50_greedy_step_ms": round(percentile(greedy_ms, 0.5), 1),
        "p95_greedy_step_ms": round(percentile(greedy_ms, 0.95), 1),
        "greedy": greedy,
        "greedy_verdict": verdict.group(0) if verdict else None,
        "server_cpu_share_drawing": drawing_cpu,
        "students_cpu_share_drawing": pages_cpu,  # the simulated pages' own share, on the same machine
        "server_cpu_share_waiting": waiting_cpu,
        "server_cpu_share_idle": baseline_cpu,
        "teacher_replica": teacher.replica,
        "replicas": dict(Counter(s.call.replica for s in class_)) if through else None,
    }


def idle_poll(url: str, code: str, class_: list[Student], teacher: PageCaller, seconds: float):
    """The pages alone for `seconds`, as they wait: the projector asks whether the round changed every quarter second,
    each student's page every 3 s (a plain GET, ui/classround/shown.py), and nothing changes, so no view is asked
    for. What a class costs the server while it only looks."""
    asks = [httpx.Client(timeout=60, headers=s.call.headers) for s in class_]  # each on its page's replica
    projector = httpx.Client(timeout=60, headers=teacher.headers)
    ask_url = url.rstrip("/") + ROUTE

    def ask(client: httpx.Client, ping: str = "") -> None:
        client.get(ask_url, params={"code": code, "seat": ping}).raise_for_status()

    def run() -> None:
        pages = [(lambda: ask(projector), PROJECTOR_EVERY_S)]
        pages += [
            (lambda client=client, s=s: ask(client, s.view.get("ping", "")), STUDENT_EVERY_S)
            for client, s in zip(asks, class_)
        ]
        stop = time.perf_counter() + seconds
        due = [time.perf_counter() + random.uniform(0, every) for _, every in pages]
        while time.perf_counter() < stop:
            k = min(range(len(pages)), key=due.__getitem__)
            time.sleep(max(0.0, due[k] - time.perf_counter()))
            pages[k][0]()
            due[k] += pages[k][1]
        for client in [*asks, projector]:
            client.close()

    return run
