"""The server-side run store: runs stay on the server, expire when idle, and are capped."""

import pytest

from decoding.loop import Run
from decoding.prompts import encode_prompt
from decoding.trace import Trace
from ui.sessions import Entry, RunStore, StoreFull


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def entry() -> Entry:
    return Entry(trace=Trace("m", "m", "cpu", "float32", "p", [1], ["p"], 0, 4, []))


def test_each_session_gets_its_own_entry():
    store = RunStore()
    a, b = entry(), entry()
    id_a, id_b = store.put(a), store.put(b)
    assert id_a != id_b
    assert store.get(id_a) is a and store.get(id_b) is b


def test_idle_runs_expire_after_the_time_to_live():
    clock = Clock()
    store = RunStore(ttl_s=60, clock=clock)
    run_id = store.put(entry())
    clock.now = 59
    store.get(run_id)  # using it resets its idle clock
    clock.now = 118
    store.get(run_id)
    clock.now = 179
    with pytest.raises(ValueError, match="press Prefill"):
        store.get(run_id)
    assert len(store) == 0


def test_the_number_of_live_runs_is_capped_with_a_clear_message():
    store = RunStore(max_runs=2)
    store.put(entry())
    store.put(entry())
    with pytest.raises(StoreFull, match="limit is 2"):
        store.put(entry())


def test_a_session_replacing_its_run_frees_the_old_one_first():
    store = RunStore(max_runs=1)
    first = store.put(entry())
    second = store.put(entry(), replace=first)
    with pytest.raises(ValueError):
        store.get(first)
    assert store.get(second) is not None


def test_release_frees_a_run_and_ignores_unknown_ids():
    store = RunStore()
    run_id = store.put(entry())
    store.release(run_id)
    store.release(run_id)
    store.release(None)
    assert len(store) == 0


def test_kv_cache_bytes_are_counted_and_capped(tiny):
    prompt = encode_prompt(tiny.tokenizer, "hello there", chat=False)
    run = Run(tiny, prompt, max_new_tokens=4)
    run.prefill()
    live = Entry(trace=run.trace, run=run)
    assert live.kv_bytes > 0
    store = RunStore(max_kv_bytes=live.reserved_bytes + 1)
    store.put(live)
    assert store.kv_bytes() == live.kv_bytes
    run2 = Run(tiny, prompt, max_new_tokens=4)
    run2.prefill()
    with pytest.raises(StoreFull, match="KV caches"):
        store.put(Entry(trace=run2.trace, run=run2))


def test_the_cap_counts_what_a_run_will_grow_to_not_what_it_holds_now(tiny):
    prompt = encode_prompt(tiny.tokenizer, "hello there", chat=False)
    run = Run(tiny, prompt, max_new_tokens=40)
    run.prefill()
    live = Entry(trace=run.trace, run=run)
    per_token = live.kv_bytes / len(prompt.ids)
    assert live.reserved_bytes == int(per_token * (len(prompt.ids) + 40))
    store = RunStore(max_kv_bytes=live.kv_bytes * 2)  # room for its cache today, not for 40 more tokens
    with pytest.raises(StoreFull, match="lower max new tokens"):
        store.put(live)
