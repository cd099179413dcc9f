"""The server-side store: every kind of session state (live runs, speculative runs, beam searches) is held in one
store, under one time to live, one count cap and one KV-cache byte cap; idle items are freed first, the least recently
used first, and their sessions are told on their next action; an item in use is never freed for another session, one
session holds at most its share, and class rounds live on their own budget."""

import inspect
from typing import NamedTuple

import pytest

from decoding.beams.search import beam_steps
from decoding.forward import kv_cache_bytes
from decoding.loop import Run
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.speculative.records import EARLY_EXIT
from decoding.speculative.run import SpecRun
from tests.helpers.store import entry
from ui import sessions
from ui.beams import handlers as beams_handlers
from ui.sessions import STORE, Entry, Store, StoreFull, beam_search_bytes, spec_run_bytes
from ui.speculative import handlers as speculative_handlers


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def ids(lm, text="hello there, hello there") -> list[int]:
    return encode_prompt(lm.tokenizer, text, chat=False).ids


def live_run(lm, max_new: int = 4) -> Entry:
    run = Run(lm, encode_prompt(lm.tokenizer, "hello there", chat=False), max_new_tokens=max_new)
    run.prefill()
    return Entry(trace=run.trace, run=run)


def spec_run(lm, max_new: int = 8) -> SpecRun:
    run = SpecRun(
        lm, ids(lm), SamplerSettings(), source=EARLY_EXIT, draft_tokens=3, exit_layer=1, max_new_tokens=max_new
    )
    run.prefill()
    return run


class Beams(NamedTuple):
    """A beam search as the beam tab keeps it: its generator and its cache at its longest, counted when it starts."""

    gen: object
    nbytes: int


def beam_search(lm, num_beams: int = 3, max_new: int = 6) -> Beams:
    prompt = ids(lm)
    gen = beam_steps(lm, prompt, num_beams, 1.0, False, max_new)
    return Beams(gen, beam_search_bytes(lm, len(prompt), num_beams, max_new))


def kinds(store: Store):
    """The store's speculative runs and beam searches, counted as the tabs count them."""
    spec = store.kind("speculative run", bytes_of=spec_run_bytes, again="press Prefill", smaller="use a shorter prompt")
    beams = store.kind("beam search", bytes_of=lambda b: b.nbytes, again="press Step", smaller="use fewer beams")
    return spec, beams


def test_each_session_gets_its_own_entry():
    store = Store()
    a, b = entry(), entry()
    id_a, id_b = store.put(a), store.put(b)
    assert id_a != id_b
    assert store.get(id_a) is a and store.get(id_b) is b


def test_idle_runs_expire_after_the_time_to_live():
    clock = Clock()
    store = Store(ttl_s=60, clock=clock)
    run_id = store.put(entry())
    clock.now = 59
    store.get(run_id)  # using it resets its idle clock
    clock.now = 118
    store.get(run_id)
    clock.now = 179
    with pytest.raises(ValueError, match="run expired after 1 idle minutes: press Prefill"):
        store.get(run_id)
    assert len(store) == 0


def test_every_kind_expires_after_the_one_time_to_live_and_its_session_is_told_once():
    clock = Clock()
    store = Store(ttl_s=120, clock=clock)
    spec = store.kind("speculative run", bytes_of=len, again="press Prefill", smaller="")
    beams = store.kind("beam search", bytes_of=len, again="press Step", smaller="")
    spec.put("s", "a speculative run")
    beams.put("b", "a beam search")
    clock.now = 121
    with pytest.raises(ValueError, match="speculative run expired after 2 idle minutes: press Prefill"):
        spec.get("s")
    with pytest.raises(ValueError, match="beam search expired after 2 idle minutes: press Step"):
        beams.get("b")
    assert spec.get("s") is None and beams.get("b") is None  # told once: the next action starts afresh


def test_a_full_store_frees_the_least_recently_used_idle_item_and_tells_its_session():
    clock = Clock()
    store = Store(max_items=2, clock=clock, in_use_s=60)
    first, second = store.put(entry()), store.put(entry())
    clock.now = 100  # both idle
    store.get(first)  # used since: the second is the least recently used, and idle
    third = store.put(entry())
    assert len(store) == 2 and store.get(first) and store.get(third)
    with pytest.raises(ValueError) as info:
        store.get(second)
    message = str(info.value)
    assert (
        "run was freed after 2 idle minutes to make room for other sessions" in message and "press Prefill" in message
    )
    # the page asks again with the same id (a second Step): the same reason, not another one
    with pytest.raises(ValueError, match="run was freed after 2 idle minutes to make room for other sessions"):
        store.get(second)


def test_a_session_replacing_its_run_frees_the_old_one_first():
    store = Store(max_items=1)
    first = store.put(entry())
    second = store.put(entry(), replace=first)
    with pytest.raises(ValueError, match="run is no longer on the server"):  # released, not freed for others
        store.get(first)
    assert store.get(second) is not None


def test_a_session_storing_again_under_its_key_replaces_its_own_item():
    store = Store(max_items=2)
    beams = store.kind("beam search", bytes_of=len, again="press Step", smaller="")
    beams.put("a", "search a")
    beams.put("b", "search b")
    beams.put("a", "again")  # not a new one: nothing else is freed
    assert len(store) == 2 and beams.get("b") == "search b" and beams.get("a") == "again"
    beams.release("a")
    assert beams.get("a") is None


def test_release_frees_a_run_and_ignores_unknown_ids():
    store = Store()
    run_id = store.put(entry())
    store.release(run_id)
    store.release(run_id)
    store.release(None)
    assert len(store) == 0


def test_a_forgotten_reason_falls_back_to_the_plain_message(monkeypatch):
    monkeypatch.setattr(sessions, "TOLD_MAX", 2)
    clock = Clock()
    store = Store(max_items=1, clock=clock, in_use_s=60)
    run_ids = []
    for _ in range(4):  # each frees the one before, idle by then
        run_ids.append(store.put(entry()))
        clock.now += 61
    with pytest.raises(ValueError, match="run is no longer on the server"):
        store.get(run_ids[0])
    with pytest.raises(ValueError, match="freed after 1 idle minute to make room"):
        store.get(run_ids[2])


def test_a_run_is_counted_at_what_it_will_grow_to_not_what_it_holds_now(tiny):
    live = live_run(tiny, max_new=40)
    prompt_len = len(live.run.prompt.ids)
    per_token = live.kv_bytes / prompt_len
    assert live.kv_bytes == kv_cache_bytes(live.run.cache) > 0
    assert live.reserved_bytes == int(per_token * (prompt_len + 40))
    store = Store(max_kv_bytes=live.kv_bytes * 2)  # room for its cache today, not for 40 more tokens
    with pytest.raises(StoreFull, match="lower max new tokens") as info:
        store.put(live)
    assert f"needs {sessions._mib(live.reserved_bytes)}" in str(info.value)
    assert f"the {sessions._mib(live.kv_bytes * 2)} the server allows" in str(info.value)
    assert len(store) == 0


def test_a_static_cache_run_is_counted_at_the_cache_it_allocated(tiny):
    run = Run(tiny, encode_prompt(tiny.tokenizer, "hello there", chat=False), max_new_tokens=40, path="static")
    run.prefill()
    live = Entry(trace=run.trace, run=run)
    per_token = live.kv_bytes / run.static.max_len
    assert live.reserved_bytes == live.kv_bytes == int(per_token * (len(run.prompt.ids) + 40))


def test_a_captured_static_run_also_counts_its_graphs_memory(tiny, monkeypatch):
    run = Run(tiny, encode_prompt(tiny.tokenizer, "hello there", chat=False), max_new_tokens=40, path="static")
    run.prefill()
    live = Entry(trace=run.trace, run=run)
    assert run.static.pool_bytes == 0 and live.reserved_bytes == live.kv_bytes  # uncaptured: no graph, no pool
    monkeypatch.setattr(run.static, "_pool_bytes", 3 * 2**20)  # what a capture on CUDA measures
    assert live.reserved_bytes == live.kv_bytes + 3 * 2**20


def test_a_speculative_run_counts_its_target_and_draft_caches_at_their_longest(tiny):
    run = spec_run(tiny, max_new=8)
    held = len(run.ids) - 1  # the prefill leaves the last prompt token for the first round
    measured = kv_cache_bytes(run.cache) + kv_cache_bytes(run.draft.cache)
    assert kv_cache_bytes(run.draft.cache) * 2 == kv_cache_bytes(run.cache)  # the draft: 1 of the tiny model's 2 layers
    assert spec_run_bytes(run) * held == measured * (len(run.ids) + 8 + 3)  # prompt + max new + K guesses
    while not run.done:
        run.round()
        assert kv_cache_bytes(run.cache) + kv_cache_bytes(run.draft.cache) <= spec_run_bytes(run)


def test_a_beam_search_counts_every_beams_cache_at_its_longest(tiny):
    prompt = ids(tiny)
    search, reserved = beam_search(tiny)  # counted before its first step, when it is stored
    for step, _ in enumerate(search):
        cache = inspect.getgeneratorlocals(search)["cache"]
        assert kv_cache_bytes(cache) * (len(prompt) + 6) == reserved * (len(prompt) + step)
        assert kv_cache_bytes(cache) <= reserved


def test_a_full_server_of_every_kind_stays_under_the_cap_and_frees_the_least_recently_used_first(tiny):
    run, spec, search = live_run(tiny), spec_run(tiny), beam_search(tiny)
    sizes = [run.reserved_bytes, spec_run_bytes(spec), search.nbytes]
    clock = Clock()
    store = Store(max_kv_bytes=sum(sizes), clock=clock, in_use_s=60, share_floor=sum(sizes))  # one of each
    idle = lambda: setattr(clock, "now", clock.now + 61)  # noqa: E731
    specs, beams = kinds(store)
    run_id = store.put(run)
    specs.put("spec session", spec)
    beams.put("beam session", search)
    assert store.kv_bytes() == sum(sizes) and len(store) == 3
    idle()
    # another run: the run stored first is freed, and only it
    late_id = store.put(live_run(tiny))
    assert store.kv_bytes() == sum(sizes) and len(store) == 3
    with pytest.raises(ValueError) as info:
        store.get(run_id)
    assert "this session's run was freed after 1 idle minute to make room" in str(info.value)
    assert "press Prefill" in str(info.value)
    # the speculative run is used again, so another beam search frees the beam search, now the least recently used
    idle()
    assert specs.get("spec session") is spec
    beams.put("late beam session", beam_search(tiny))
    assert store.kv_bytes() <= store.max_kv_bytes and len(store) == 3
    assert specs.get("spec session") is spec and store.get(late_id).run is not None
    with pytest.raises(ValueError, match="beam search was freed after .* to make room .* press Step"):
        beams.get("beam session")


def test_one_bigger_than_the_whole_cap_is_refused_with_its_size_and_the_cap(tiny):
    search = beam_search(tiny, num_beams=4)
    store = Store(max_kv_bytes=search.nbytes - 1)
    _, beams = kinds(store)
    store.put(entry())
    with pytest.raises(StoreFull, match="this beam search needs .* MiB of KV cache at its longest.*use fewer beams"):
        beams.put("s", search)
    assert len(store) == 1  # nothing freed for an item that could never fit


def test_the_tabs_keep_their_state_in_the_one_store():
    assert speculative_handlers.RUNS.store is STORE and beams_handlers.SEARCHES.store is STORE


def test_the_prefix_blocks_count_once_under_the_cap_and_give_way_to_sessions_first(tiny):
    from decoding.forward import forward_one
    from decoding.passes import Pass
    from decoding.serving.prefix import PrefixCache

    run = live_run(tiny)
    prompt = [(7 * i + 3) % 90 + 5 for i in range(40)]
    logits, cache = forward_one(tiny, prompt, None, 0)
    blocks = kv_cache_bytes(cache) + logits.nbytes  # the end block keeps the logits after the prompt
    store = Store(max_kv_bytes=blocks + run.reserved_bytes // 2)
    assert blocks < store.max_kv_bytes
    pool = PrefixCache(max_bytes=10 * blocks)
    store.share(pool)
    store.share(pool)  # once, however often the scheduler is asked for
    pool.keep(prompt, cache, logits, Pass(1.0))
    assert pool.nbytes == blocks and store.kv_bytes() == blocks
    run_id = store.put(run)  # a session needs the room: blocks go, never it
    assert store.get(run_id) is run and store.kv_bytes() <= store.max_kv_bytes
    assert pool.nbytes < blocks
    pool.keep(prompt, cache, logits, Pass(1.0))  # the pool grows only into what the sessions leave
    assert store.kv_bytes() <= store.max_kv_bytes


MIB = 2**20


def sized(store: Store):
    """A kind whose items say their own size: (name, bytes)."""
    return store.kind("beam search", bytes_of=lambda item: item[1], again="press Step", smaller="use fewer beams")


def test_a_session_in_use_is_never_freed_for_another_and_the_newcomer_is_told_the_numbers():
    clock = Clock()
    store = Store(max_kv_bytes=10 * MIB, share_floor=10 * MIB, clock=clock, in_use_s=60)
    searches = sized(store)
    searches.put("student", ("a search", 6 * MIB))
    clock.now = 59  # touched 59 s ago: still in use
    with pytest.raises(sessions.Refused) as info:
        store.reserve(sessions.Need(prompt_tokens=2, max_new=4, per_token=MIB))
    message = str(info.value)
    assert "this run needs 6 MiB of KV cache at its longest (a 2-token prompt + 4 max new tokens)" in message
    assert "only 4 MiB is free: 1 sessions in use hold 6 MiB of the server's 10 MiB" in message
    assert "lower Max new tokens to 2 or fewer" in message
    assert searches.get("student") == ("a search", 6 * MIB) and len(store) == 1  # untouched, and nothing reserved
    run_id = store.reserve(sessions.Need(prompt_tokens=2, max_new=2, per_token=MIB))  # what it was told fits
    assert store.kv_bytes() == 10 * MIB and run_id


def test_idle_items_go_first_the_oldest_first_and_an_item_in_use_stays():
    clock = Clock()
    store = Store(max_kv_bytes=10 * MIB, share_floor=10 * MIB, clock=clock, in_use_s=60)
    searches = sized(store)
    for at, name in ((0, "oldest"), (10, "older"), (20, "recent")):
        clock.now = at
        searches.put(name, (name, 3 * MIB))
    clock.now = 75  # the first two idle (75 and 65 s), the third in use (55 s)
    searches.put("new", ("new", 6 * MIB))  # 1 MiB free: the oldest, then the older, give way
    assert searches.get("recent") == ("recent", 3 * MIB) and searches.get("new") == ("new", 6 * MIB)
    for name in ("oldest", "older"):
        with pytest.raises(ValueError, match="beam search was freed after 1 idle minute to make room .* press Step"):
            searches.get(name)
    assert store.kv_bytes() == 9 * MIB


def test_an_item_held_by_one_of_its_events_is_in_use_however_long_ago_it_was_touched():
    import threading

    clock = Clock()
    store = Store(max_kv_bytes=4 * MIB, share_floor=4 * MIB, clock=clock, in_use_s=60)
    held = entry()  # a run whose cache at its longest is the whole cap
    searches = store.kind("run to end", bytes_of=lambda _: 4 * MIB, again="press Prefill", smaller="")
    searches.put("student", held)
    taken, done = threading.Event(), threading.Event()

    def run_to_end():  # a long Run to end holds its entry
        with held.lock:
            taken.set()
            done.wait(10)

    worker = threading.Thread(target=run_to_end)
    worker.start()
    taken.wait(10)
    clock.now = 1000
    with pytest.raises(sessions.Refused, match="only 0 MiB is free"):
        store.reserve(sessions.Need(prompt_tokens=1, max_new=1, per_token=MIB))
    done.set()
    worker.join()
    store.reserve(sessions.Need(prompt_tokens=1, max_new=1, per_token=MIB))  # idle and let go: it gives way
    with pytest.raises(ValueError, match="run to end was freed after 17 idle minutes"):
        searches.get("student")


def test_one_session_holds_at_most_its_share_the_cap_over_the_sessions_in_use_never_under_the_floor():
    clock = Clock()
    store = Store(max_kv_bytes=100 * MIB, share_floor=10 * MIB, clock=clock, in_use_s=60)
    searches = sized(store)
    for i in range(4):
        searches.put(f"student {i}", ("small", MIB))
    with pytest.raises(sessions.Refused) as info:  # 96 MiB free, but five sessions share 100 MiB
        store.reserve(sessions.Need(prompt_tokens=10, max_new=20, per_token=MIB))
    message = str(info.value)
    assert "more than one session's share: with 5 sessions using the server, each may hold 20 MiB of its 100 MiB" in (
        message
    )
    assert "lower Max new tokens to 10 or fewer" in message
    store.reserve(sessions.Need(prompt_tokens=10, max_new=10, per_token=MIB))
    clock.now = 61  # the four went idle: only the new run is in use, so a bigger share
    big = Store(max_kv_bytes=100 * MIB, share_floor=40 * MIB, clock=clock)
    for i in range(9):
        sized(big).put(f"student {i}", ("small", MIB))
    big.reserve(sessions.Need(prompt_tokens=10, max_new=25, per_token=MIB))  # 35 MiB: under the floor of 40
    with pytest.raises(sessions.Refused, match="shorten the prompt to under 40 tokens .it has 50. and lower Max new"):
        big.reserve(sessions.Need(prompt_tokens=50, max_new=1, per_token=MIB))


def test_a_refused_prefill_keeps_the_sessions_run_and_a_reservation_holds_its_room_until_put_or_released():
    store = Store(max_kv_bytes=10 * MIB, share_floor=10 * MIB)
    old = store.put(entry())
    with pytest.raises(sessions.StoreFull, match="needs 11 MiB .* more than the 10 MiB .* lower Max new tokens to 9"):
        store.reserve(sessions.Need(prompt_tokens=1, max_new=10, per_token=MIB), replace=old)
    assert store.get(old) is not None
    run_id = store.reserve(sessions.Need(prompt_tokens=1, max_new=7, per_token=MIB), replace=old)
    with pytest.raises(ValueError, match="run is no longer on the server .*released"):  # released for its new run
        store.get(old)
    assert store.kv_bytes() == 8 * MIB and store.runs.get(run_id) is None  # reserved: nothing to step yet
    with pytest.raises(sessions.Refused, match="only 2 MiB is free"):
        store.reserve(sessions.Need(prompt_tokens=1, max_new=3, per_token=MIB))
    kept = entry()
    assert store.put(kept, run_id=run_id) == run_id and store.get(run_id) is kept
    store.release(run_id)  # a stopped prefill gives its room back the same way
    assert store.kv_bytes() == 0


def test_a_live_round_is_never_freed_for_runs_nor_for_another_round_and_an_ended_one_is():
    clock = Clock()
    store = Store(max_kv_bytes=10 * MIB, share_floor=10 * MIB, rounds_kv_bytes=5 * MIB, clock=clock, in_use_s=60)
    rounds = store.kind(
        "class round", bytes_of=lambda r: r["bytes"], again="start a new round", smaller="", live=lambda r: r["live"]
    )
    first = {"bytes": 3 * MIB, "live": True}
    rounds.put("ROUND1", first)
    store.reserve(sessions.Need(prompt_tokens=1, max_new=9, per_token=MIB))  # the whole runs' cap, beside the round
    clock.now = 10_000 - 1  # hours later, idle for runs' purposes (within the time to live, say a longer one)
    store.ttl_s = 20_000
    with pytest.raises(sessions.Refused, match="needs 3 MiB of KV cache, and 1 live class rounds hold 3 MiB of the 5"):
        rounds.put("ROUND2", {"bytes": 3 * MIB, "live": True})
    first["bytes"] = 5 * MIB  # a live round storing itself again (a new greedy run) always fits
    rounds.put("ROUND1", first)
    assert rounds.get("ROUND1") is first
    first["live"] = False  # it ended: a new round may take its place
    rounds.put("ROUND3", {"bytes": 2 * MIB, "live": True})
    assert rounds.get("ROUND1") is None and rounds.get("ROUND3")["live"]


def test_a_reserved_run_keeps_its_room_when_more_sessions_come_in_use_during_its_prefill(tiny):
    live = live_run(tiny, max_new=40)
    need = sessions.run_need(tiny, len(live.run.prompt.ids), 40)
    assert need.nbytes == live.reserved_bytes
    store = Store(max_kv_bytes=int(2.5 * need.nbytes), share_floor=need.nbytes // 2)
    run_id = store.reserve(need)  # alone: its share is the whole cap
    searches = sized(store)
    for i in range(4):  # four more sessions while its prompt is read: a share is now a fifth of the cap
        searches.put(f"student {i}", ("small", 1))
    with pytest.raises(sessions.Refused, match="more than one session's share"):
        store.reserve(need)
    assert store.put(live, run_id=run_id) == run_id and store.get(run_id) is live
