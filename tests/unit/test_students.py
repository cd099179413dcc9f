"""Simulated students step real runs through the scheduler, stop by themselves, and refuse bad class sizes."""

import time

import pytest

from decoding.serving.scheduler import Scheduler
from decoding.serving.students import MAX_STUDENTS, SimulatedClass


def test_a_simulated_class_steps_through_the_scheduler_and_stops_by_itself(tiny):
    scheduler = Scheduler(tiny)
    crowd = SimulatedClass(scheduler)
    crowd.start(students=3, seconds=1.5, pause_s=(0.01, 0.05))
    assert crowd.status().students == 3  # read at once: on a loaded machine a sleep here could outlast the class
    deadline = time.monotonic() + 30
    while crowd.status().students and time.monotonic() < deadline:
        time.sleep(0.1)
    status = crowd.status()
    assert status.students == 0 and status.steps > 0
    # every forward pass they fed one token into rode in the scheduler's ticks (a step that ends its run with an
    # end-of-sequence token needs no pass after it, so there can be fewer such rows than steps, never more)
    assert 0 < sum(t.decode_rows for t in scheduler.log.recent()) <= status.steps


def test_stop_ends_the_class(tiny):
    crowd = SimulatedClass(Scheduler(tiny))
    crowd.start(students=2, seconds=60, pause_s=(0.01, 0.02))
    crowd.stop()
    deadline = time.monotonic() + 30
    while crowd.status().students and time.monotonic() < deadline:
        time.sleep(0.05)
    assert crowd.status().students == 0


@pytest.mark.parametrize("students", [0, MAX_STUDENTS + 1, 2.5, "8"])
def test_a_bad_class_size_is_named_with_its_range(tiny, students):
    with pytest.raises(ValueError, match=rf"simulated students must be a whole number in \[1, {MAX_STUDENTS}\]"):
        SimulatedClass(Scheduler(tiny)).start(students=students)
