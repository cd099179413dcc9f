"""The server-side store: every kind of session state (live runs, speculative runs, beam searches) is held in one
store, under one time to live, one count cap and one KV-cache byte cap; the least recently used are freed first, and
their sessions are told on their next action."""

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
from decoding.trace import Trace
from ui import sessions
from ui.beams import handlers as beams_handlers
from ui.sessions import STORE, Entry, Store, StoreFull, beam_search_bytes, spec_run_bytes
from ui.speculative import handlers as speculative_handlers


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def entry() -> Entry:
    trace = Trace(
        model_id="m",
        model_label="m",
        device="cpu",
        dtype="float32",
        prompt="p",
        prompt_ids=[1],
        prompt_tokens=["p"],
        seed=0,
        max_new_tokens=4,
        stop_strings=[],
    )
    return Entry(trace=trace)


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


def test_a_full_store_frees_the_least_recently_used_and_tells_its_session():
    store = Store(max_items=2)
    first, second = store.put(entry()), store.put(entry())
    store.get(first)  # used since: the second is now the least recently used
    third = store.put(entry())
    assert len(store) == 2 and store.get(first) and store.get(third)
    with pytest.raises(ValueError) as info:
        store.get(second)
    message = str(info.value)
    assert "run was freed to make room for newer sessions" in message
    assert "at most 2 runs, beam searches and speculative runs" in message and "press Prefill" in message
    # the page asks again with the same id (a second Step): the same reason, not another one
    with pytest.raises(ValueError, match="run was freed to make room for newer sessions"):
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
    store = Store(max_items=1)
    run_ids = [store.put(entry()) for _ in range(4)]  # each frees the one before
    with pytest.raises(ValueError, match="run is no longer on the server"):
        store.get(run_ids[0])
    with pytest.raises(ValueError, match="freed to make room"):
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
    assert f"needs {live.reserved_bytes / 2**20:,.0f} MiB" in str(info.value)
    assert f"the {live.kv_bytes * 2 / 2**20:,.0f} MiB the server allows" in str(info.value)
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
    store = Store(max_kv_bytes=sum(sizes))  # room for one of each
    specs, beams = kinds(store)
    run_id = store.put(run)
    specs.put("spec session", spec)
    beams.put("beam session", search)
    assert store.kv_bytes() == sum(sizes) and len(store) == 3
    # another run: the run stored first is freed, and only it
    late_id = store.put(live_run(tiny))
    assert store.kv_bytes() == sum(sizes) and len(store) == 3
    with pytest.raises(ValueError) as info:
        store.get(run_id)
    assert "this session's run was freed to make room for newer sessions" in str(info.value)
    assert f"at most {sum(sizes) / 2**20:,.0f} MiB of KV cache" in str(info.value) and "press Prefill" in str(
        info.value
    )
    # the speculative run is used again, so another beam search frees the beam search, now the least recently used
    assert specs.get("spec session") is spec
    beams.put("late beam session", beam_search(tiny))
    assert store.kv_bytes() <= store.max_kv_bytes and len(store) == 3
    assert specs.get("spec session") is spec and store.get(late_id).run is not None
    with pytest.raises(ValueError, match="beam search was freed to make room .* press Step"):
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
