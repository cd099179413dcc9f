"""Simulated students: a class on this server for one person alone, so the batching lesson has traffic to read.

Each simulated student is a thread that does what a student does in the Step tab: prefill a prompt of its own,
then press Step after a short pause (drawn between `pause_s`), sampling at temperature 0.8 with its own seed,
and start a new prompt when a run ends. Their prompts (`PROMPTS`) are each their own, or their own questions in the
chat template (whose first block every prompt shares: the prefix cache's partial hit), or one prompt for the whole
class (as a class presses one preset: computed once). Their steps go through the same scheduler as everyone's, so
the real students' steps share passes with them. They stop by themselves after `seconds`, or when asked.
"""

import random
import threading
import time
from dataclasses import dataclass

from decoding.loop import Run
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt

MAX_STUDENTS = 32
MAX_SECONDS = 300
TOPICS = (
    "the moon",
    "rivers",
    "bread",
    "volcanoes",
    "owls",
    "the piano",
    "glaciers",
    "bicycles",
    "honey bees",
    "chess",
    "lighthouses",
    "coral reefs",
    "the printing press",
    "thunderstorms",
    "maps",
    "tea",
    "deserts",
    "comets",
    "windmills",
    "octopuses",
    "libraries",
    "the Roman roads",
    "autumn leaves",
    "trains",
    "whales",
    "clocks",
    "salt",
    "bridges",
    "penguins",
    "the alphabet",
)
SETTINGS = SamplerSettings(temperature=0.8, top_p=0.95)
# eager students: a short pause between Steps, so a class of 8 shares passes often enough to see it
PAUSE_S = (0.1, 0.6)
OWN, TEMPLATE, ONE = "their own prompts", "their own questions, one chat template", "one prompt for the class"
PROMPTS = (OWN, TEMPLATE, ONE)


def student_prompt(tokenizer, prompts: str, index: int, run_number: int):
    """What student `index` types for its `run_number`-th run, under the class's `prompts` (one of PROMPTS)."""
    if prompts not in PROMPTS:
        raise ValueError(f"the class's prompts must be one of {PROMPTS}, got {prompts!r}")
    topic = TOPICS[0 if prompts == ONE else (index + run_number) % len(TOPICS)]
    return encode_prompt(tokenizer, f"Here is one fact about {topic}:", chat=prompts != OWN)


@dataclass
class ClassStatus:
    students: int  # running now
    steps: int  # steps they took so far
    seconds_left: float


class SimulatedClass:
    """At most one class per server; starting again replaces the one running."""

    def __init__(self, scheduler):
        self.scheduler = scheduler
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._steps, self._ends = 0, 0.0
        self._lock = threading.Lock()

    def start(
        self, students: int = 8, seconds: float = 60, pause_s: tuple[float, float] = PAUSE_S, prompts: str = OWN
    ) -> None:
        student_prompt(self.scheduler.lm.tokenizer, prompts, 0, 0)  # a bad choice is refused before anyone starts
        if not (isinstance(students, int) and 1 <= students <= MAX_STUDENTS):
            raise ValueError(f"simulated students must be a whole number in [1, {MAX_STUDENTS}], got {students!r}")
        if not (isinstance(seconds, (int, float)) and 1 <= seconds <= MAX_SECONDS):
            raise ValueError(f"the class runs for [1, {MAX_SECONDS}] seconds, got {seconds!r}")
        self.stop()
        self._stop = threading.Event()
        self._steps, self._ends = 0, time.monotonic() + seconds
        stop = self._stop
        self._threads = [
            threading.Thread(target=self._student, args=(i, stop, pause_s, prompts), daemon=True, name=f"student-{i}")
            for i in range(students)
        ]
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        self._stop.set()

    def status(self) -> ClassStatus:
        alive = sum(t.is_alive() for t in self._threads)
        return ClassStatus(alive, self._steps, max(0.0, self._ends - time.monotonic()) if alive else 0.0)

    def _student(self, index: int, stop: threading.Event, pause_s: tuple[float, float], prompts: str) -> None:
        lm, rng = self.scheduler.lm, random.Random(index)
        run_number = 0
        while not self._over(stop):
            prompt = student_prompt(lm.tokenizer, prompts, index, run_number)
            run = Run(lm, prompt, seed=1000 * index + run_number, max_new_tokens=48, scheduler=self.scheduler)
            run.prefill()
            while not run.done and not stop.wait(rng.uniform(*pause_s)) and not self._over(stop):
                run.step(SETTINGS)
                with self._lock:
                    self._steps += 1
            run_number += 1

    def _over(self, stop: threading.Event) -> bool:
        return stop.is_set() or time.monotonic() >= self._ends
