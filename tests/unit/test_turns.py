"""Turns on the model are granted first come first served, nest, and a long job can let waiters in between passes."""

import threading
import time

from decoding.serving.turns import Turns


def test_turns_are_granted_in_the_order_they_were_asked_for():
    turns, order = Turns(), []
    turns.acquire("first")
    threads = []
    for i in range(5):
        t = threading.Thread(target=lambda i=i: (turns.acquire(f"t{i}"), order.append(i), turns.release()))
        t.start()
        threads.append(t)
        while turns.waiting() < i + 1:  # each asks only after the one before is queued
            time.sleep(0.001)
    turns.release()
    for t in threads:
        t.join(timeout=5)
    assert order == [0, 1, 2, 3, 4]


def test_a_turn_nests_in_the_thread_that_holds_it():
    turns = Turns()
    with turns.turn("outer"), turns.turn("inner"):
        assert turns.holder.label == "outer"
    assert turns.holder is None


def test_passing_the_turn_lets_a_waiter_run_between_two_passes():
    turns, log = Turns(), []
    with turns.turn("long job", exclusive=True, eta_s=30):
        log.append("pass 1")
        waiter = threading.Thread(target=lambda: (turns.acquire("step"), log.append("step"), turns.release()))
        waiter.start()
        while not turns.waiting():
            time.sleep(0.001)
        turns.pass_turn()
        log.append("pass 2")
        assert turns.holder.label == "long job" and turns.holder.eta_s == 30
    waiter.join(timeout=5)
    assert log == ["pass 1", "step", "pass 2"]


def test_passing_the_turn_with_nobody_waiting_keeps_it():
    turns = Turns()
    with turns.turn("job"):
        holder = turns.holder
        turns.pass_turn()
        assert turns.holder is holder


def test_an_exclusive_holder_says_how_long_it_has_left():
    turns = Turns()
    with turns.turn("measuring", exclusive=True, eta_s=30):
        left = turns.holder.left_s(turns.holder.since + 12)
    assert left == 18
