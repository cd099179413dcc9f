"""A run's views and the answer that stops it, in order (ui.running): the stopping answer waits for the view in
flight, the run then ends without another step, and a run always ends on END, which draws nothing."""

import threading

from ui.running import END, Running


def counting(taken: list):
    """Views 1, 2, 3, ... each one's step counted in `taken` as it runs."""
    n = 0
    while True:
        n += 1
        taken.append(n)
        yield n


def test_a_run_that_ends_by_itself_ends_on_end():
    assert list(Running().views(iter([1, 2]))) == [1, 2, END]


def test_stop_waits_for_the_view_in_flight_and_the_run_takes_no_more_steps():
    running, taken, stopped = Running(), [], []
    run = running.views(counting(taken))
    assert next(run) == 1  # yielded holding the lock: gradio has not asked for the next view yet
    stopping = threading.Thread(target=lambda: (running.stop(), stopped.append(True)))
    stopping.start()
    stopping.join(0.3)
    assert not stopped  # waiting until gradio asks for the next view: by then view 1 is on the page's stream
    assert list(run) == [END] and taken == [1]  # asked, the run stops before another step
    stopping.join(5)
    assert stopped


def test_stopped_while_a_step_runs_that_steps_view_is_dropped():
    running, taken = Running(), []

    def steps():
        yield 1
        running.stopped = True  # as `stop` does while step 2 is under way
        taken.append(2)
        yield 2

    assert list(running.views(steps())) == [1, END] and taken == [2]


def test_stop_with_nothing_running_returns_at_once_and_a_run_after_it_takes_no_step():
    running = Running()
    running.stop()
    assert list(running.views(iter([1]))) == [END]


def test_views_are_sent_at_most_once_every_quarter_second_the_newest_and_the_last_always():
    ticks = iter([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6])  # the clock as each of views 1 to 7 is made
    sent = list(Running().views(iter(range(1, 8)), every_s=0.25, clock=lambda: next(ticks)))
    assert sent == [1, 4, 7, END]  # 1 at 0.0, 4 at 0.3, 7 at 0.6; and no view twice
    ticks = iter([0.0, 0.1])
    assert list(Running().views(iter([1, 2]), every_s=0.25, clock=lambda: next(ticks))) == [1, 2, END]


def test_a_run_stopped_between_sent_views_drops_the_ones_it_had_not_sent():
    running, ticks = Running(), iter([0.0, 0.1, 0.2])

    def steps():
        yield 1
        yield 2  # made 0.1 s after 1: kept back
        running.stopped = True  # as `stop` does while step 3 is under way
        yield 3

    assert list(running.views(steps(), every_s=0.25, clock=lambda: next(ticks))) == [1, END]


def test_halt_ends_the_run_under_way_after_its_view_in_flight_and_says_how_soon():
    running, taken, took = Running(), [], []
    run = running.views(counting(taken), every_s=0)
    assert next(run) == 1
    halting = threading.Thread(target=lambda: took.append(running.halt()))
    halting.start()
    halting.join(0.3)
    assert not took  # waiting until gradio asks for the next view: by then view 1 is on the page's stream
    assert list(run) == [END] and taken == [1]
    halting.join(5)
    assert took and 0 <= took[0] < 5


def test_a_halt_with_nothing_running_stops_nothing_later():
    running = Running()
    assert running.halt() is None
    assert list(running.views(iter([1, 2]), every_s=0)) == [1, 2, END]


def test_a_run_after_a_halt_goes_on():
    running, taken = Running(), []
    run = running.views(counting(taken), every_s=0)
    next(run)
    threading.Thread(target=running.halt).start()
    assert list(run) == [END]
    assert list(running.views(iter([7, 8]), every_s=0)) == [7, 8, END]  # Run to end pressed again: it runs
