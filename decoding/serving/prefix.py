"""Prefix caching: a prompt's KV cache kept in blocks of 16 tokens, so the next prompt that starts the same way
skips them.

A class presses the same preset within seconds, and every chat prompt starts with the same template: without this
the server computes the same keys and values thirty times. As vLLM's automatic prefix caching does, the scheduler
keeps each prompt's K/V in blocks of `BLOCK_TOKENS` tokens, each keyed by a hash of its tokens and of its parent
block's hash, so one hash names the whole prefix up to the end of its block. A new prompt takes the longest chain of
cached blocks and prefills only the rest. The prompt's last, partial block is kept too (an "end" block), with the
logits after it: a prompt identical to a cached one is not computed at all, and gets exactly what the first got.

One difference from vLLM: there, attention reads the shared blocks in place through each request's block table;
here a session's cache is one contiguous `DynamicCache` (what the model's attention reads), so the shared blocks
are COPIED into it. The copy saves the computation, not the memory: the server holds the blocks once more than it
would without sharing (`PrefixStats` counts both, and what a block table would hold). Blocks are freed least
recently used; their bytes count under the server's one KV cap through the `room` hook (ui.sessions).
"""

import hashlib
import threading
import time
import weakref
from array import array
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
from transformers import DynamicCache

from decoding.forward import filled_cache, kv_cache_bytes
from decoding.passes import Pass
from decoding.serving.scripted import cat_each

BLOCK_TOKENS = 16
SHORT_HASH = 6  # hex digits of a block's hash shown on the page


def block_hash(parent: str | None, tokens, end: bool = False) -> str:
    """The hash naming a block: its tokens and its parent's hash (so the whole prefix); an end block is marked."""
    h = hashlib.blake2b(digest_size=8)
    h.update((parent or "").encode())
    h.update(b"E" if end else b"B")
    h.update(array("q", tokens).tobytes())
    return h.hexdigest()


class PromptBlock(NamedTuple):
    hash: str
    tokens: tuple[int, ...]
    end: bool  # the prompt's last block (1 to 16 tokens), which holds the logits after the prompt


def prompt_blocks(ids) -> list[PromptBlock]:
    """A prompt cut into blocks: each full block, then the end block (1 to 16 tokens). The full blocks leave at
    least one token for the end block, which holds the logits after the prompt."""
    full = (len(ids) - 1) // BLOCK_TOKENS
    out, parent = [], None
    for b in range(full):
        tokens = tuple(ids[b * BLOCK_TOKENS : (b + 1) * BLOCK_TOKENS])
        parent = block_hash(parent, tokens)
        out.append(PromptBlock(parent, tokens, end=False))
    tail = tuple(ids[full * BLOCK_TOKENS :])
    out.append(PromptBlock(block_hash(parent, tail, end=True), tail, end=True))
    return out


@dataclass
class Block:
    """One block of a prompt's K/V: per layer (1, H_kv, t, D) keys and values, t <= 16 tokens; `nbytes` counts
    them, and an end block's logits."""

    hash: str
    tokens: tuple[int, ...]
    keys: list[torch.Tensor]
    values: list[torch.Tensor]
    nbytes: int
    end: bool = False
    logits: torch.Tensor | None = None  # (V,) after the prompt: end blocks only
    passed: Pass | None = None  # how those logits were computed: end blocks only
    hits: int = 0


@dataclass
class Hit:
    """What the cache holds of a prompt: the chain of full blocks it starts with, and the end block if the whole
    prompt is there."""

    blocks: list[Block]
    end: Block | None = None

    @property
    def tokens(self) -> int:
        return sum(len(b.tokens) for b in self.blocks) + (len(self.end.tokens) if self.end else 0)


@dataclass
class _Session:
    """What one session's cache was made of at its prefill: its prompt's block hashes, how many were copied."""

    hashes: list[str]
    lengths: list[int]
    copied: int  # of its blocks, how many came from the pool (the rest it computed)


@dataclass(frozen=True)
class SessionBlocks:
    """One live session's cache as blocks, for the page: its first `copied` blocks came from the pool (shared), the
    rest of its prompt it computed; `pooled[i]` is True while block i is in the pool."""

    hashes: list[str]
    lengths: list[int]
    copied: int
    pooled: list[bool]
    tokens: int  # the cache's length now: the prompt's blocks, then what it generated (its own)


@dataclass(frozen=True)
class PrefixStats:
    prompts: int  # fresh prompts that asked the cache
    prompts_hit: int  # of them, those that took at least one block
    prompt_tokens: int
    reused_tokens: int  # prompt tokens not computed
    blocks: int  # in the pool now
    pool_bytes: int
    copy_ms: float  # total time spent copying blocks into sessions' caches
    copied_blocks: int
    evicted: int
    session_bytes: int  # every live session's own contiguous cache
    block_table_bytes: int  # what the same sessions would hold if blocks were shared in place (vLLM's block table)

    @property
    def hit_rate(self) -> float:
        return self.reused_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


@dataclass
class PrefixCache:
    """The pool of prompt blocks, least recently used first; safe to call from any thread."""

    max_bytes: int
    room: Callable[[], int] | None = None  # bytes the server's KV cap leaves the pool in all (set by `limit_by`)
    _blocks: OrderedDict = field(default_factory=OrderedDict)
    _sessions: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _bytes: int = 0
    _counts: dict = field(
        default_factory=lambda: dict(
            prompts=0, prompts_hit=0, prompt_tokens=0, reused_tokens=0, copy_ms=0.0, copied_blocks=0, evicted=0
        )
    )

    def __post_init__(self):
        if not (isinstance(self.max_bytes, int) and self.max_bytes >= 0):
            raise ValueError(f"the prefix cache's max_bytes must be a whole number >= 0, got {self.max_bytes!r}")

    def limit_by(self, room: Callable[[], int]) -> None:
        """The owner of the server's KV cap says how many bytes the pool may hold at most, asked before it grows."""
        self.room = room

    @property
    def nbytes(self) -> int:
        """What the pool holds now (read without the lock: one int)."""
        return self._bytes

    def find(self, ids: list[int]) -> Hit:
        """The longest chain of cached blocks `ids` starts with (and its end block, if the whole prompt is there),
        counted as one prompt asking."""
        with self._lock:
            chain, end = [], None
            for wanted in prompt_blocks(ids):
                block = self._blocks.get(wanted.hash)
                if block is None:
                    break
                if wanted.end:
                    end = block
                else:
                    chain.append(block)
            hit = Hit(chain, end)
            for block in reversed(hit.blocks + ([end] if end else [])):  # the root most recent: it goes last
                block.hits += 1
                self._blocks.move_to_end(block.hash)
            self._count(ids, hit.tokens)
            return hit

    def copy_into(self, hit: Hit, config) -> DynamicCache:
        """A new contiguous cache holding the hit's blocks, copied (vLLM would point a block table at them): one copy
        of each layer's keys and values, whatever the number of blocks, all in one call that lets go of the
        interpreter lock once (`scripted.cat_each`)."""
        start = time.perf_counter()
        parts = hit.blocks + ([hit.end] if hit.end else [])
        count = len(parts[0].keys)
        keys = [[b.keys[layer] for b in parts] for layer in range(count)]
        values = [[b.values[layer] for b in parts] for layer in range(count)]
        joined = cat_each(keys + values, dim=2)  # (1, H_kv, T, D) each
        cache = filled_cache(config, list(zip(joined[:count], joined[count:])))
        with self._lock:
            self._counts["copy_ms"] += (time.perf_counter() - start) * 1e3
            self._counts["copied_blocks"] += len(parts)
        return cache

    def keep(self, ids: list[int], cache, logits: torch.Tensor, passed: Pass) -> None:
        """Keep the blocks of a prompt just computed into `cache` (the end block with its `logits`), as far as the
        caps allow; older blocks are freed first."""
        parent_end, new = 0, []
        for part in prompt_blocks(ids):
            a, b = parent_end, parent_end + len(part.tokens)
            parent_end = b
            if part.hash in self._blocks:
                continue
            keys = [layer.keys[:, :, a:b].clone() for layer in cache.layers]  # (1, H_kv, t, D) each
            values = [layer.values[:, :, a:b].clone() for layer in cache.layers]  # (1, H_kv, t, D) each
            extra = dict(logits=logits.clone(), passed=passed) if part.end else {}
            # the end block's logits (V floats) are held too, and counted with its keys and values
            nbytes = sum(t.nbytes for t in keys + values) + (logits.nbytes if part.end else 0)
            new.append(Block(part.hash, part.tokens, keys, values, nbytes, end=part.end, **extra))
        # asked before taking the pool's lock: the cap's owner takes its own lock, and frees blocks under it
        room = self.max_bytes if self.room is None else min(self.max_bytes, self.room())
        with self._lock:
            for block in new:
                if not self._make_room(block.nbytes, room):
                    break
                self._blocks[block.hash] = block
                self._bytes += block.nbytes
            for part in reversed(prompt_blocks(ids)):  # the root most recent
                if part.hash in self._blocks:
                    self._blocks.move_to_end(part.hash)

    def remember(self, cache, ids: list[int], copied: int) -> None:
        """Note what a session's cache was made of (for the page), for as long as the cache lives."""
        blocks = prompt_blocks(ids)
        with self._lock:
            self._sessions[cache] = _Session([b.hash for b in blocks], [len(b.tokens) for b in blocks], copied)

    def free(self, nbytes: int) -> int:
        """Free least recently used blocks until `nbytes` are freed (or none is left); the bytes freed."""
        with self._lock:
            return self._evict(nbytes)

    def sessions(self) -> list[SessionBlocks]:
        with self._lock:
            live = list(self._sessions.items())
            pooled = set(self._blocks)
        return [
            SessionBlocks(s.hashes, s.lengths, s.copied, [h in pooled for h in s.hashes], cache.get_seq_length())
            for cache, s in live
        ]

    def stats(self) -> PrefixStats:
        sessions = self.sessions()
        with self._lock:
            live = list(self._sessions.keys())
            sizes = {h: b.nbytes for h, b in self._blocks.items()}
            counts, pool, blocks = dict(self._counts), sum(sizes.values()), len(self._blocks)
        session_bytes = sum(kv_cache_bytes(c) for c in live)
        per_token = session_bytes / max(1, sum(s.tokens for s in sessions))
        # in place, a prompt block shared by several sessions is held once; everything else once per session
        unique = {h: n for s in sessions for h, n in zip(s.hashes, s.lengths)}
        own = sum(s.tokens - sum(s.lengths) for s in sessions)
        table = int(per_token * (sum(unique.values()) + own))
        return PrefixStats(
            blocks=blocks, pool_bytes=pool, session_bytes=session_bytes, block_table_bytes=table, **counts
        )

    # --- under the lock ---

    def _count(self, ids: list[int], reused: int) -> None:
        self._counts["prompts"] += 1
        self._counts["prompts_hit"] += int(reused > 0)
        self._counts["prompt_tokens"] += len(ids)
        self._counts["reused_tokens"] += reused

    def _make_room(self, nbytes: int, allowed: int) -> bool:
        if nbytes > allowed:
            return False
        self._evict(self._bytes + nbytes - allowed)
        return True

    def _evict(self, nbytes: int) -> int:
        freed = 0
        while self._blocks and freed < nbytes:
            _, block = self._blocks.popitem(last=False)
            freed += block.nbytes
            self._bytes -= block.nbytes
            self._counts["evicted"] += 1
        return freed

    def count_reuse(self, ids: list[int]) -> None:
        """An identical prompt that waited for the one being computed: all of its tokens reused."""
        with self._lock:
            self._count(ids, len(ids))
