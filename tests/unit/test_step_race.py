"""A session's events never interleave on its run (ui.sessions.Entry.lock): a Step raced against the page's other
events on the same run (a knob moved, "each strategy alone" drawn as it comes on screen) always answers with the
distribution it chose from, and records the settings it chose with."""

import threading
import time

from decoding.models import TINY
from tests.helpers.charts import read_chart
from tests.helpers.step_knobs import CONFIG, KNOBS, page
from tests.helpers.step_view import changed
from ui.context import RAW
from ui.sessions import STORE
from ui.step import handlers as h
from ui.step import view as step_view

HOT = {**KNOBS, "temperature": 2.5, "top_k": 3}  # what the other events set: another distribution on the chart
STEPS = 16


def test_a_step_raced_against_the_pages_other_events_answers_with_the_distribution_it_chose_from(tiny, monkeypatch):
    run_id = h.prefill(CONFIG, None, TINY, "hello", RAW, 0, STEPS, "", page(KNOBS)).run_id
    inspect, choices = h.inspect_step, step_view.distribution.candidate_choices

    def slowly(fn):  # wider windows inside a step (before it chooses, and before its view is drawn)
        def slow(*args, **kwargs):
            time.sleep(0.002)
            return fn(*args, **kwargs)

        return slow

    monkeypatch.setattr(h, "inspect_step", slowly(inspect))
    monkeypatch.setattr(step_view.distribution, "candidate_choices", slowly(choices))
    done, failed = threading.Event(), []
    rounds, a_round = [0], threading.Condition()  # the page's rounds of other events so far

    def the_page_meanwhile():
        while not done.is_set():
            try:
                h.settings_changed(run_id, page(HOT, strategies_open=True, on_screen="strategies"), HOT)
                h.strategies_drawn(run_id, page(HOT))
            except Exception as err:  # an event that met the run halfway through a step  # noqa: BLE001
                failed.append(repr(err))
            with a_round:
                rounds[0] += 1
                a_round.notify_all()
            time.sleep(0.001)  # as a page's events come: one after another, not one tight loop

    def a_round_since(seen):  # the other events ran between this step and the last, however loaded the machine
        with a_round:
            assert a_round.wait_for(lambda: rounds[0] > seen, timeout=60), "the page's other events never ran"
            return rounds[0]

    other = threading.Thread(target=the_page_meanwhile)
    other.start()
    try:
        seen = 0
        for n in range(1, STEPS + 1):
            seen = a_round_since(seen)
            answer = h.step(run_id, page(KNOBS))
            entry = STORE.get(run_id)
            chart = read_chart(changed(answer.stage, "step-dist"))
            # the answer shows the step it took, not another event's preview
            assert chart.title.startswith(f"step {n} "), chart.title
            with entry.lock:
                step = entry.trace.steps[n - 1]
            chosen = chart.series("chosen")
            assert chosen.customdata[0][0] == step.token_id and chosen.customdata[0][2] > 0  # drawn from what it shows
            assert step.settings["temperature"] == KNOBS["temperature"]  # with the settings of its own click
            if entry.run.done:
                break
    finally:
        done.set()
        other.join()
    assert failed == []  # and none of them met the run halfway through a step
    STORE.release(run_id)
