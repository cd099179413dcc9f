"""Prefix caching: a prompt identical to a cached one gets exactly what computing it alone gives; identical prompts
at once are computed once; a shared start is copied and only the rest prefilled; blocks go least recently used,
within the pool's cap and the room the server's KV cap leaves."""

import torch

from decoding.forward import forward_one, kv_cache_bytes
from decoding.serving.prefix import BLOCK_TOKENS, PrefixCache, block_hash, prompt_blocks
from decoding.serving.scheduler import Scheduler
from tests.helpers.serving import greedy_alone, greedy_through, together

PROMPT = [(7 * i + 3) % 90 + 5 for i in range(40)]  # 2 full blocks and an end block of 8


def prefilled(scheduler) -> int:
    return sum(t.prefill_tokens for t in scheduler.log.recent(600))


def test_block_hash_names_the_whole_prefix_not_just_the_block():
    same = tuple(range(BLOCK_TOKENS))
    assert block_hash("aa", same) != block_hash("bb", same)
    assert block_hash(None, same) != block_hash(None, same, end=True)
    blocks = prompt_blocks(PROMPT)
    assert [len(b.tokens) for b in blocks] == [16, 16, 8] and [b.end for b in blocks] == [False, False, True]
    assert [len(b.tokens) for b in prompt_blocks(PROMPT[:32])] == [16, 16], "the end block keeps at least one token"


def test_a_prompt_identical_to_a_cached_one_gives_what_computing_it_alone_gives_bit_for_bit(tiny):
    scheduler = Scheduler(tiny)
    first = greedy_through(scheduler, PROMPT, 5)[0]
    tokens, seen, passes = greedy_through(scheduler, PROMPT, 5)
    alone_tokens, alone_seen = greedy_alone(tiny, PROMPT, 5)
    assert (passes[0].mode, passes[0].origin, passes[0].impl) == ("cached", "pool", "modules")  # a prompt's pass
    assert tokens == first == alone_tokens
    assert all(torch.equal(a, b) for a, b in zip(seen, alone_seen))
    assert prefilled(scheduler) == len(PROMPT), "the second prompt was computed again"


def test_a_copied_prompt_says_what_computing_it_took_beside_the_copys_own_time(tiny):
    """The page draws a copied prefill as a copy and names the computed one beside it (visuals.step.timeline): the
    pass record carries the first computation's time."""
    scheduler = Scheduler(tiny)
    computed = greedy_through(scheduler, PROMPT, 2)[2][0]
    copied = greedy_through(scheduler, PROMPT, 2)[2][0]
    assert computed.mode != "cached" and computed.computed_ms is None
    assert copied.mode == "cached" and copied.computed_ms == computed.ms


def test_identical_prompts_at_once_are_computed_once(tiny):
    scheduler = Scheduler(tiny)
    scheduler.start()
    runs = together(lambda ids: greedy_through(scheduler, list(ids), 3), [(PROMPT,)] * 4)
    alone_tokens, alone_seen = greedy_alone(tiny, PROMPT, 3)
    for tokens, seen, _ in runs:
        assert tokens == alone_tokens
        assert torch.equal(seen[0], alone_seen[0]), "the first distribution is the one pass's, computed alone"
    assert prefilled(scheduler) == len(PROMPT)
    assert [passes[0].mode for *_, passes in runs].count("cached") == 3
    # each copy says where its logits came from: the prompt computed in the same tick, or the pool once it was kept
    assert {passes[0].origin for *_, passes in runs if passes[0].mode == "cached"} <= {"in flight", "pool"}
    stats = scheduler.prefix.stats()
    assert stats.prompts == 4 and stats.reused_tokens == 3 * len(PROMPT)


def test_a_shared_start_is_copied_and_only_the_rest_prefilled(tiny):
    scheduler = Scheduler(tiny)
    greedy_through(scheduler, PROMPT, 1)
    other = PROMPT[:32] + [11, 12, 13, 14, 15]
    before = prefilled(scheduler)
    tokens, seen, passes = greedy_through(scheduler, other, 4)
    alone_tokens, alone_seen = greedy_alone(tiny, other, 4)
    assert prefilled(scheduler) - before == 5, "the two cached blocks were computed again"
    assert passes[0].mode == "prefix" and passes[0].noise == scheduler.prefix_noise
    assert tokens == alone_tokens
    assert max(float((a - b).abs().max()) for a, b in zip(seen, alone_seen)) < 1e-4
    views = {len(s.hashes): s for s in scheduler.prefix.sessions()}
    assert views[3].copied == 2 and views[3].pooled == [True, True, True]


def test_run_my_steps_alone_never_takes_cached_blocks(tiny):
    scheduler = Scheduler(tiny)
    greedy_through(scheduler, PROMPT, 1)
    tokens, seen, passes = greedy_through(scheduler, PROMPT, 4, alone=True)
    alone_tokens, alone_seen = greedy_alone(tiny, PROMPT, 4)
    assert {p.mode for p in passes} == {"alone"}
    assert tokens == alone_tokens and all(torch.equal(a, b) for a, b in zip(seen, alone_seen))


def _cache_for(tiny, ids):
    logits, cache = forward_one(tiny, ids, None, 0)
    return logits, cache


def test_blocks_are_freed_least_recently_used_within_the_cap(tiny):
    from decoding.passes import Pass

    prompts = [[p + k for p in PROMPT[:20]] for k in range(3)]  # each: one full block and an end block of 4
    logits, cache = _cache_for(tiny, prompts[0])
    one_prompt = kv_cache_bytes(cache) + logits.nbytes  # its blocks, and the logits its end block keeps
    pool = PrefixCache(max_bytes=2 * one_prompt)
    for ids in prompts:
        logits, cache = _cache_for(tiny, ids)
        pool.keep(ids, cache, logits, Pass(1.0))
        pool.find(prompts[0])  # the first prompt stays in use
    assert pool.nbytes <= 2 * one_prompt
    assert pool.find(prompts[0]).end is not None
    assert pool.find(prompts[1]).blocks == [], "the least recently used prompt was not the one freed"
    assert pool.stats().evicted == 2


def test_the_server_cap_bounds_the_pool_through_its_room_hook(tiny):
    from decoding.passes import Pass

    logits, cache = _cache_for(tiny, PROMPT)
    pool = PrefixCache(max_bytes=10 * kv_cache_bytes(cache))
    pool.limit_by(lambda: 0)
    pool.keep(PROMPT, cache, logits, Pass(1.0))
    assert pool.nbytes == 0 and pool.find(PROMPT).tokens == 0
    assert pool.free(1) == 0
