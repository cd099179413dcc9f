"""A request's time limit: the decode loop stops between two steps once it has run past it, keeps what it did, and
says why, naming the limit; a Watch (a measurement, a beam or repetition run) stops the same way."""

import pytest

from decoding.loop import Run, drive
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.watch import Deadline, OverLimit, Watch


def test_a_deadline_passes_until_its_limit_then_names_it():
    now = [100.0]
    limit = Deadline(5.0, start=100.0, why="one request here")
    limit.check(lambda: now[0])
    now[0] = 105.5
    with pytest.raises(OverLimit, match=r"one request here may run for at most 5 s"):
        limit.check(lambda: now[0])


def test_drive_stops_past_the_deadline_and_keeps_the_steps_taken(tiny):
    run = Run(tiny, encode_prompt(tiny.tokenizer, "hello", chat=False), max_new_tokens=8, seed=0)
    run.prefill()
    steps = drive(run, SamplerSettings(temperature=0.0), deadline=Deadline(0.0, start=0.0))
    next(steps)  # one step always runs: the limit is checked between steps
    with pytest.raises(OverLimit):
        next(steps)
    assert len(run.trace.steps) == 1 and not run.done
    run.step(SamplerSettings(temperature=0.0))  # the run is whole: it goes on from where it stopped
    assert len(run.trace.steps) == 2


def test_a_watch_past_its_deadline_stops_at_its_next_check():
    watch = Watch(deadline=Deadline(0.0, start=0.0))
    with pytest.raises(OverLimit, match="at most 0 s"):
        watch.check()
    Watch().check()  # no deadline: never stops on time
