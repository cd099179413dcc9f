"""The continuous-batching tab and the server note read the scheduler's own state; the timing tab hands a kept
measurement to the next person and holds the model alone while it measures."""

import threading
import time
from types import SimpleNamespace

import pytest

from decoding.models import TINY
from decoding.serving.prefix import prompt_blocks
from tests.helpers.charts import read_chart
from tests.helpers.made import FULL, measured
from ui.context import AppConfig, scheduler_for, simulated_class
from ui.serving import tab as serving_tab
from ui.timing import tab as timing_tab
from visuals.parts import Parts

CONFIG = AppConfig(TINY, "cpu")


def shown() -> Parts:
    """The tab's view as a page sees it now (each refresh sends it what changed: ui/patch.py)."""
    return serving_tab.view(CONFIG)


def test_the_tab_reads_the_traffic_of_this_server(tiny):
    scheduler = scheduler_for(tiny)
    scheduler.forward([3, 4, 5], None, 0)
    now = shown()
    ticks = read_chart("".join(now.strips["#serving-ticks .serving-passes"]))
    cost = read_chart(now.slots["#serving-cost"])
    assert ticks.series("decoding one token").y and cost.series("one packed pass (median)").y
    assert "forward pass" in now.slots["#serving-status"]
    numbers = serving_tab.traffic(CONFIG)
    assert numbers["scheduler"] and numbers["ticks"] >= 1 and numbers["prefill_tokens"] >= 3
    assert all(isinstance(k, str) for k in numbers["rows_histogram"])  # JSON keys


def test_each_page_is_sent_the_whole_view_once_then_what_changed(tiny):
    scheduler = scheduler_for(tiny)
    scheduler.forward([3, 4, 5], None, 0)
    page, other = SimpleNamespace(session_hash="page"), SimpleNamespace(session_hash="other")
    assert "html" in serving_tab.refresh(CONFIG, page)
    scheduler.forward([6, 7], None, 0)
    again = serving_tab.refresh(CONFIG, page)
    assert "ops" in again and any(op[0] == "append" for op in again["ops"])  # the new pass, appended
    assert "html" in serving_tab.refresh(CONFIG, other)  # another page: its own first view, whole
    assert serving_tab.whole(page)["html"] == serving_tab.SENT.patcher("page").sent.html
    serving_tab.forget(page)
    assert "html" in serving_tab.refresh(CONFIG, page)  # a page let go (closed) starts again from the whole view


def test_the_tab_draws_each_sessions_cache_as_the_blocks_the_server_holds(tiny):
    scheduler = scheduler_for(tiny)
    prompt = [(5 * i + 1) % 80 + 7 for i in range(40)]
    caches = [scheduler.forward(prompt, None, 0)[1] for _ in range(2)]  # kept: a session's cache lives while it does
    now = shown()
    drawn = read_chart(now.slots["#serving-blocks"])
    hashed = {s.name: {c[1] for c in s.customdata} for s in drawn.data if s.name != "generated"}
    hashes = [b.hash[:6] for b in prompt_blocks(prompt)]
    assert set(hashes) <= hashed["copied from the pool (shared)"]  # the second session copied them all
    assert set(hashes) <= hashed["computed by this session"] | hashed["copied from the pool (shared)"]
    prefix = now.slots["#serving-prefix"]
    assert "not computed" in prefix and "block table" in prefix
    numbers = serving_tab.traffic(CONFIG)["prefix"]
    assert numbers["reused_tokens"] >= len(prompt) and numbers["blocks"] >= 3 and len(caches) == 2


def test_the_server_note_says_what_holds_the_model_and_for_how_long(tiny):
    turns = scheduler_for(tiny).turns
    assert serving_tab.server_note(CONFIG) == ""
    held, release = threading.Event(), threading.Event()

    def measurement():
        with turns.turn("a timing measurement", exclusive=True, eta_s=30):
            held.set()
            release.wait(10)

    worker = threading.Thread(target=measurement)
    worker.start()
    held.wait(10)
    try:
        note = serving_tab.server_note(CONFIG)
    finally:
        release.set()
        worker.join(10)
    assert note.startswith("**Please wait: a timing measurement is running for everyone on this server: about")
    assert "s left.** Steps wait until it ends." in note


def test_opening_a_class_of_zero_is_refused_by_name():
    with pytest.raises(ValueError, match=r"Simulated students must be a whole number in \[1, 32\]"):
        serving_tab.open_students(CONFIG, 0, 60)


def test_stop_them_says_what_it_stopped_or_that_nothing_was_running(tiny):
    crowd = simulated_class(scheduler_for(tiny))
    crowd.stop()
    assert serving_tab.stop_students(CONFIG) == "No simulated students were stepping: nothing to stop."
    crowd.start(2, 30)
    said = serving_tab.stop_students(CONFIG)
    assert said.startswith("Stopped 2 simulated students (") and said.endswith(" s were left).")
    deadline = time.monotonic() + 60  # each student ends at its next pause
    while crowd.status().students and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not crowd.status().students


def test_a_kept_measurement_is_handed_out_at_once_and_re_measure_takes_a_new_one(tiny, monkeypatch):
    calls = []

    def fake_measure_all(lm, plan, watch, machine=None):
        holder = scheduler_for(lm).turns.holder
        calls.append((holder.label, holder.exclusive))
        time.sleep(0.01)
        return measured(**FULL)

    monkeypatch.setattr(timing_tab, "SHARED", type(timing_tab.SHARED)())
    monkeypatch.setattr(timing_tab, "measure_all", fake_measure_all)
    quiet = lambda *a, **k: None  # noqa: E731
    first = timing_tab.measure(CONFIG, "quick", quiet, None).summary
    second = timing_tab.measure(CONFIG, "quick", quiet, None).summary
    again = timing_tab.measure(CONFIG, "quick", quiet, None, again=True).summary
    assert calls == [("a timing measurement", True)] * 2  # the second press measured nothing
    assert first.startswith("*Measured just now") and again.startswith("*Measured just now")
    assert second.startswith("*Measured at ") and "shared with everyone here" in second
