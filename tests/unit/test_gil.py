"""decoding/serving/gil.py: the switch interval is lowered while a pass runs, nests across threads, and is put back
once the last pass ends (an error inside included)."""

import sys
import threading

import pytest

from decoding.serving import gil


def test_the_switch_interval_is_lowered_while_any_pass_runs_and_put_back_after_the_last():
    before = sys.getswitchinterval()
    inside, release = threading.Event(), threading.Event()

    def other_pass():
        with gil.urgent():
            inside.set()
            release.wait(10)

    other = threading.Thread(target=other_pass)
    other.start()
    assert inside.wait(10)
    with gil.urgent():
        assert sys.getswitchinterval() == pytest.approx(gil.URGENT_S)
    assert sys.getswitchinterval() == pytest.approx(gil.URGENT_S)  # the other thread's pass still runs
    release.set()
    other.join(10)
    assert sys.getswitchinterval() == before


def test_an_error_in_a_pass_puts_the_interval_back():
    before = sys.getswitchinterval()
    with pytest.raises(RuntimeError), gil.urgent():
        raise RuntimeError("the pass failed")
    assert sys.getswitchinterval() == before
