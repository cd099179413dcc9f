"""Everything a browser session holds on the server: live runs, beam searches and speculative runs, in one store.

Each of them holds a KV cache (megabytes of tensors), so it never goes into `gr.State`: the page keeps only a short
id, and this store maps the id to the item. One time to live frees idle items; one count cap and one byte cap bound
them all, each item counted by its KV cache at its longest, so one classroom that opens every tab cannot exhaust
the server's memory.

A fair share for each session, since one server holds the whole class and one client can open many sessions:
- an item is *in use* while its session has touched it in the last `IN_USE_S` (5 minutes), or while one of its events
  holds it; other items are *idle*;
- a new item never frees an item in use: idle items go first, the oldest first, and their sessions are told so on
  their next action;
- one item may hold at most its share of the KV cap: the cap divided by the items in use (itself counted), but never
  less than `SHARE_FLOOR_BYTES` (256 MiB: a 5,000-token prompt and 800 new tokens of the bundled model);
- an item over its share, or over what is free once only items in use are left, is refused before any work is done
  for it (`Store.reserve`), with the MiB it needs, the MiB it may have and what to lower (`Need`).
A class round lives on its own small budget (`ROUNDS_KV_BYTES`, a kind made with `live`): runs never free a round,
and a round is freed only once it has ended or expired. The store knows nothing of gradio: it raises ValueErrors
(`Refused`, and `StoreFull` for an item too big for an empty store) and the UI turns them into messages; why a run
is not there at all is said by the one rule for every lesson (ui/alive.py, `gone`: the server restarted, it was
released, or there never was one).

A pool every session shares (the scheduler's prefix blocks, decoding.serving.prefix) counts under the same byte cap,
once: it grows only into the room the sessions leave, and its least recently used blocks are freed before any
session's item.
"""

import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from decoding.forward import kv_cache_bytes
from decoding.loop import Run
from decoding.models import LoadedModel
from decoding.speculative.drafts import layer_count
from decoding.speculative.run import SpecRun
from decoding.timing.roofline import kv_bytes_for
from decoding.timing.shape import model_shape
from decoding.trace import Trace
from ui.alive import gone, page_restarted
from ui.running import Running

# a teacher with a bigger class or server raises these through the environment
TTL_S = float(os.environ.get("DECODING_LAB_TTL_S", 30 * 60))
# runs, beam searches and speculative runs together: a lecture hall of 100 with a run on two tabs each and room to
# spare (at 96, a class of 100 stepping at once had its oldest runs freed). Memory is guarded by the KV cap below,
# which counts every run at its longest; a run's other state (its last logits, its trace) is a few hundred KB.
MAX_ITEMS = int(os.environ.get("DECODING_LAB_MAX_RUNS", 256))
MAX_KV_BYTES = int(float(os.environ.get("DECODING_LAB_MAX_KV_GB", 2)) * 1024**3)
# a session that touched its item this recently is using it: another session's new item never frees it
IN_USE_S = float(os.environ.get("DECODING_LAB_IN_USE_S", 5 * 60))
# one item's share of the KV cap is the cap / the items in use, never less than this
SHARE_FLOOR_BYTES = int(float(os.environ.get("DECODING_LAB_SHARE_FLOOR_MB", 256)) * 2**20)
# class rounds, on their own budget: never freed for runs; an ended round is freed for a new round
ROUNDS_KV_BYTES = int(float(os.environ.get("DECODING_LAB_ROUNDS_KV_MB", 256)) * 2**20)
MAX_ROUNDS = int(os.environ.get("DECODING_LAB_MAX_ROUNDS", 32))
TOLD_MAX = 1024  # why a session's item was freed, kept until it comes back; the oldest reasons are forgotten first


class Refused(ValueError):
    """A new item the caps cannot hold without freeing another session's item in use."""


class StoreFull(Refused):
    """An item bigger than the whole memory cap."""


def _mib(nbytes: float) -> str:
    mib = nbytes / 2**20
    return f"{mib:,.0f} MiB" if mib >= 1 or mib == 0 else f"{mib:.2f} MiB"  # a tiny model's runs are not "0 MiB"


@dataclass(frozen=True)
class Need:
    """A run's KV cache at its longest, from the knobs that set it: what a refusal tells the student to lower."""

    prompt_tokens: int
    max_new: int
    per_token: int  # the cache's bytes per position

    @property
    def nbytes(self) -> int:
        return self.per_token * (self.prompt_tokens + self.max_new)

    def advice(self, allowed: int) -> str:
        """What to lower so that the run fits in `allowed` bytes."""
        fits = allowed // self.per_token  # positions
        if fits - self.prompt_tokens >= 1:
            return f"lower Max new tokens to {fits - self.prompt_tokens:,} or fewer"
        return f"shorten the prompt to under {fits:,} tokens (it has {self.prompt_tokens:,}) and lower Max new tokens"

    def said(self) -> str:
        return f"a {self.prompt_tokens:,}-token prompt + {self.max_new:,} max new tokens"


@dataclass
class Entry:
    """One session's run: live (`run` set) or a loaded trace replayed without a model (`run` None)."""

    trace: Trace
    run: Run | None = None
    view: object = None  # what the tab that owns the run shows of it (its own dataclass: the store never reads it)
    running: Running = field(default_factory=Running)  # a Run N's views before the answer that stops it (ui.running)
    # one session's events never interleave on its run: a Step, a moved knob, a panel opening, each holds it whole
    # (`holding`), so a step never chooses from one distribution while the page is shown another
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    @property
    def kv_bytes(self) -> int:
        return kv_cache_bytes(self.run.cache) if self.run is not None and self.run.cache is not None else 0

    @property
    def reserved_bytes(self) -> int:
        """The KV cache this run will hold at its longest (prompt + max new tokens): what the caps count,
        so runs admitted now cannot outgrow the memory cap later as they step. A captured static run also holds its
        graph's own memory (its pool: the step's activations and output)."""
        if self.run is None or self.run.cache is None or not self.run.ids:
            return 0
        if self.run.static is not None:  # a static cache holds prompt + max new tokens from its first pass
            return self.kv_bytes + self.run.static.pool_bytes
        per_token = self.kv_bytes / len(self.run.ids)
        return int(per_token * (len(self.run.prompt.ids) + self.trace.max_new_tokens))


def run_need(lm: LoadedModel, prompt_tokens: int, max_new: int) -> Need:
    """A step or constrained run's cache at its longest, before its prompt's pass has made it."""
    return Need(prompt_tokens, max_new, kv_bytes_at(lm, 1))


def kv_bytes_at(lm: LoadedModel, tokens: int, layers: int | None = None) -> int:
    """One sequence's KV cache at `tokens` positions through `layers` decoder layers (all by default), from the
    model's shape. The layers are counted from the model itself: another session's early-exit draft shortens
    `config.num_hidden_layers` while it runs."""
    return int(kv_bytes_for(replace(model_shape(lm), layers=layers or layer_count(lm)), tokens))


def spec_run_bytes(run: SpecRun) -> int:
    """A speculative run's caches at their longest: the target's, and the early-exit draft's through its L layers,
    each holding the prompt, max new tokens and the K guesses a verify pass adds before it crops."""
    longest = run.prompt_len + run.max_new + run.k
    draft = kv_bytes_at(run.lm, longest, run.draft.layers) if run.draft is not None else 0
    return kv_bytes_at(run.lm, longest) + draft


def beam_search_bytes(lm: LoadedModel, prompt_len: int, num_beams: int, max_new_tokens: int) -> int:
    """A beam search's cache at its longest: every beam holds the prompt and max new tokens. Counted from its settings
    before its first step, when its cache does not exist yet."""
    return num_beams * kv_bytes_at(lm, prompt_len + max_new_tokens)


@dataclass
class _Held:
    kind: "Kind"
    item: object  # None while reserved: its work (a prompt's pass) is under way
    nbytes: int  # its KV cache at its longest, counted when it was stored
    used: float  # the store's clock when it was last stored or read


class Store:
    """Items by (kind, key), least recently used first. One lock guards every change, so making room and storing
    happen together."""

    def __init__(
        self,
        ttl_s: float = TTL_S,
        max_items: int = MAX_ITEMS,
        max_kv_bytes: int = MAX_KV_BYTES,
        clock: Callable[[], float] = time.monotonic,
        *,
        in_use_s: float = IN_USE_S,
        share_floor: int = SHARE_FLOOR_BYTES,
        rounds_kv_bytes: int = ROUNDS_KV_BYTES,
        max_rounds: int = MAX_ROUNDS,
    ):
        self.ttl_s, self.max_items, self.max_kv_bytes, self.clock = ttl_s, max_items, max_kv_bytes, clock
        self.in_use_s, self.share_floor = in_use_s, share_floor
        self.rounds_kv_bytes, self.max_rounds = rounds_kv_bytes, max_rounds
        self._held: OrderedDict[tuple[str, str], _Held] = OrderedDict()
        self._told: OrderedDict[tuple[str, str], str] = OrderedDict()  # why an item is gone, until its session asks
        self._lock = threading.Lock()
        self._pools: list = []  # shared pools counted under the byte cap (`share`)
        self.runs = self.kind(
            "run",
            bytes_of=lambda entry: entry.reserved_bytes,
            again="press Prefill",
            smaller="lower max new tokens",
            unique=True,
        )

    def kind(
        self,
        what: str,
        *,
        bytes_of: Callable[[object], int],
        again: str,
        smaller: str,
        live=None,
        unique: bool = False,
    ) -> "Kind":
        """A view of this store for one kind of item, e.g. `STORE.kind("beam search", ..., "press Step", ...)`.
        `live` (item -> bool) puts the kind on the rounds' own budget: an item is freed only once it is not live.
        `unique`: each item's key is never used again (see `Kind.unique`)."""
        return Kind(store=self, what=what, bytes_of=bytes_of, again=again, smaller=smaller, live=live, unique=unique)

    def __len__(self) -> int:
        return len(self._held)

    def kv_bytes(self) -> int:
        """Every item's KV cache at its longest (rounds' too), and the shared pools."""
        with self._lock:
            self._expire()
            return sum(held.nbytes for held in self._held.values()) + sum(pool.nbytes for pool in self._pools)

    def share(self, pool) -> None:
        """Count `pool` (an object with `nbytes`, `free(nbytes)` and `limit_by(room)`, e.g. the scheduler's prefix
        cache) under the byte cap: it may hold what the items leave, and gives way to them (idempotent)."""
        with self._lock:
            if any(p is pool for p in self._pools):
                return
            self._pools.append(pool)
        pool.limit_by(lambda: self._room_for(pool))

    def _room_for(self, pool) -> int:
        """The bytes `pool` may hold in all: what the items and the other pools leave under the cap."""
        with self._lock:
            items = sum(held.nbytes for held in self._held.values() if held.kind.live is None)
            others = sum(p.nbytes for p in self._pools if p is not pool)
        return max(0, self.max_kv_bytes - items - others)

    def reserve(self, need: Need, replace: str | None = None) -> str:
        """Room for a step or constrained run before its prompt's pass: a new id holding its bytes (released first:
        `replace`, the session's previous run), or `Refused` saying what to lower. `put(entry, run_id=...)` fills it;
        `release` gives the room back if the pass fails or is stopped."""
        run_id = uuid.uuid4().hex
        self._admit(self.runs, run_id, None, need.nbytes, need, replace)
        return run_id

    def put(self, entry: Entry, replace: str | None = None, run_id: str | None = None) -> str:
        """Store a step or constrained run under a new id, or the id `reserve` gave it (releasing `replace`, the
        session's previous run, first)."""
        run_id = run_id or uuid.uuid4().hex
        self._admit(self.runs, run_id, entry, self.runs.bytes_of(entry), None, replace)
        return run_id

    def get(self, run_id: str | None) -> Entry:
        """The session's run, its idle clock reset. Raises ValueError if it is gone, saying why: freed or expired (the
        store's own words, at every ask while the page holds its id), else by `gone`'s rule."""
        entry = self.runs.get(run_id)
        if entry is None and run_id is None and not page_restarted():  # the page never started one
            raise ValueError("Press Prefill first: there is no run in this session yet")
        if entry is None:
            raise ValueError(gone(self.runs.what, f"{self.runs.again} to start one", had=run_id is not None))
        return entry

    @contextmanager
    def holding(self, run_id: str | None) -> Iterator[Entry]:
        """The session's run (`get`), held by this event alone until the block ends."""
        entry = self.get(run_id)
        with entry.lock:
            yield entry

    def release(self, run_id: str | None) -> None:
        self.runs.release(run_id)

    def hold(self, kind: "Kind", key: str, item) -> None:
        """`item` under `key`, replacing the session's own; idle items of others are freed to make room, never one
        in use (`Refused` then)."""
        self._admit(kind, key, item, kind.bytes_of(item), None, None)

    def find(self, kind: "Kind", key: str | None):
        """The item with its idle clock reset; None if there is none (or it is still reserved); a ValueError if it was
        freed or expired: once, or, for a kind whose keys are never used again (`Kind.unique`), at every ask."""
        with self._lock:
            self._expire()
            told = self._told.get((kind.what, key)) if kind.unique else self._told.pop((kind.what, key), None)
            if told is not None:
                raise ValueError(told)
            held = self._held.get((kind.what, key))
            if held is None:
                return None
            held.used = self.clock()
            self._held.move_to_end((kind.what, key))
            return held.item

    def drop(self, kind: "Kind", key: str | None) -> None:
        with self._lock:
            self._forget((kind.what, key))

    def _forget(self, key: tuple[str, str]) -> None:
        self._held.pop(key, None)
        self._told.pop(key, None)

    # --- admission: the share, the room, and who may be freed for it ---

    def _admit(self, kind: "Kind", key: str, item, nbytes: int, need: Need | None, replace: str | None) -> None:
        """Store `item` (None: a reservation) under `key` once its budget has room, releasing `replace` with it."""
        cap = self.max_kv_bytes if kind.live is None else self.rounds_kv_bytes
        if nbytes > cap:
            whose = "every session together" if kind.live is None else "class rounds together"
            raise StoreFull(
                f"this {kind.what} needs {_mib(nbytes)} of KV cache at its longest"
                + (f" ({need.said()})" if need else "")
                + f", more than the {_mib(cap)} the server allows for {whose}: "
                + (need.advice(cap) if need else kind.smaller)
            )
        with self._lock:
            self._expire()
            mine = {(kind.what, key)} | ({(self.runs.what, replace)} if replace is not None else set())
            reserved = self._held.get((kind.what, key))
            if reserved is not None and reserved.item is None and nbytes <= reserved.nbytes:
                pass  # its room was taken before its pass: a share that shrank meanwhile does not take it back
            elif kind.live is None:
                self._make_room(kind, nbytes, need, mine)
            else:
                self._make_round_room(kind, nbytes, mine)
            for k in mine:
                self._forget(k)
            self._held[kind.what, key] = _Held(kind, item, nbytes, self.clock())

    def in_use(self, held: _Held) -> bool:
        """Touched by its session in the last `in_use_s`, reserved, or held by one of its events right now."""
        if held.item is None or self.clock() - held.used <= self.in_use_s:
            return True
        lock = getattr(held.item, "lock", None)
        if lock is None or not lock.acquire(blocking=False):
            return lock is not None
        lock.release()
        return False

    def _make_room(self, kind: "Kind", nbytes: int, need: Need | None, mine: set) -> None:
        """Room under the runs' cap: over its share, refused; else the shared pools give way, then idle items, the
        oldest first; if items in use still leave too little, refused. Nothing is freed for a refused item."""
        others = [(k, h) for k, h in self._held.items() if k not in mine and h.kind.live is None]
        in_use = [h for _, h in others if self.in_use(h)]
        share = max(self.share_floor, self.max_kv_bytes // (len(in_use) + 1))
        lower = need.advice if need else (lambda allowed: kind.smaller)
        what = f"this {kind.what} needs {_mib(nbytes)} of KV cache at its longest" + (
            f" ({need.said()})" if need else ""
        )
        if nbytes > share:
            raise Refused(
                f"{what}, more than one session's share: with {len(in_use) + 1} sessions using the server, each may "
                f"hold {_mib(share)} of its {_mib(self.max_kv_bytes)}: {lower(share)}"
            )
        held_in_use = sum(h.nbytes for h in in_use)
        free = self.max_kv_bytes - held_in_use
        if nbytes > free or len(in_use) >= self.max_items:
            full = len(in_use) >= self.max_items or free < (need.per_token * (need.prompt_tokens + 1) if need else 1)
            raise Refused(
                f"{what}, and only {_mib(max(0, free))} is free: {len(in_use)} sessions in use hold "
                f"{_mib(held_in_use)} of the server's {_mib(self.max_kv_bytes)}"
                + (f" and its {self.max_items} places" if len(in_use) >= self.max_items else "")
                + f" ({self.in_use_s / 60:g} minutes after their last click, a session's run may be freed): "
                + ("try again in a few minutes" if full else f"{lower(free)}, or try again later")
            )
        used = sum(h.nbytes for _, h in others) + sum(pool.nbytes for pool in self._pools)
        for pool in self._pools:  # shared blocks are recomputed at the next prompt; a session's run is lost
            if used + nbytes > self.max_kv_bytes:
                used -= pool.free(used + nbytes - self.max_kv_bytes)
        count = len(others)
        for key, held in others:  # least recently used first
            if count < self.max_items and used + nbytes <= self.max_kv_bytes:
                break
            if self.in_use(held):
                continue
            del self._held[key]
            used, count = used - held.nbytes, count - 1
            idle = round((self.clock() - held.used) / 60)
            minutes = "under a minute idle" if idle < 1 else "1 idle minute" if idle == 1 else f"{idle} idle minutes"
            self._tell(key, held, f"was freed after {minutes} to make room for other sessions")

    def _make_round_room(self, kind: "Kind", nbytes: int, mine: set) -> None:
        """Room on the rounds' own budget: ended rounds go, the oldest first; a live round is never freed, and a live
        round storing itself again (a new greedy run, its end) always fits."""
        rounds = [(k, h) for k, h in self._held.items() if h.kind.live is not None and k not in mine]
        again = any(k in self._held and self._held[k].item is not None and kind.live(self._held[k].item) for k in mine)
        used = sum(h.nbytes for _, h in rounds)
        count = len(rounds)
        for key, held in rounds:
            if count < self.max_rounds and used + nbytes <= self.rounds_kv_bytes:
                return
            if held.kind.live(held.item):
                continue
            del self._held[key]
            used, count = used - held.nbytes, count - 1
        if again or (count < self.max_rounds and used + nbytes <= self.rounds_kv_bytes):
            return
        raise Refused(
            f"this {kind.what} needs {_mib(nbytes)} of KV cache, and {count} live class rounds hold {_mib(used)} of "
            f"the {_mib(self.rounds_kv_bytes)} and {self.max_rounds} places the server keeps for rounds: end a round "
            "first (a round also ends after 30 idle minutes)"
        )

    def _expire(self) -> None:
        """Drop the items idle for longer than the TTL. The least recently used come first, so the scan stops at the
        first item still in use: every read runs this, and in a class of 100 a scan of every item took 3% of the
        interpreter lock's time."""
        now = self.clock()
        while self._held:
            key, held = next(iter(self._held.items()))
            if now - held.used <= self.ttl_s:
                return
            del self._held[key]
            self._tell(key, held, f"expired after {self.ttl_s / 60:.0f} idle minutes")

    def _tell(self, key: tuple[str, str], held: _Held, why: str) -> None:
        """Keep why `held` is gone for its session's next action (the oldest reasons are forgotten first)."""
        self._told[key] = f"this session's {held.kind.what} {why}: {held.kind.again} to start again"
        while len(self._told) > TOLD_MAX:
            self._told.popitem(last=False)


@dataclass(frozen=True, eq=False)
class Kind:
    """One kind of item in the store, as a tab sees it: put, get and release by the session's key."""

    store: Store
    what: str  # what the session is told it lost, e.g. "beam search"
    bytes_of: Callable[[object], int]  # its KV cache at its longest
    again: str  # what to press to start again, e.g. "press Prefill"
    smaller: str  # how to ask for one that fits, when one is over its share or the room left
    live: Callable[[object], bool] | None = None  # the rounds' budget: True while the item may not be freed
    # each item under a key of its own, never used again (a run's id): why it went is said at every ask, as the page
    # asks again with the same id (a second Step after an eviction); a key the session reuses is told once, and its
    # next ask starts afresh
    unique: bool = False

    def put(self, key: str, item) -> None:
        self.store.hold(self, key, item)

    def get(self, key: str | None):
        """The session's item, its idle clock reset; None if it has none; a ValueError saying why if it was freed
        (told once, the next call starting afresh, unless `unique`)."""
        return self.store.find(self, key)

    def release(self, key: str | None) -> None:
        self.store.drop(self, key)

    @contextmanager
    def holding(self, key: str | None) -> Iterator:
        """The session's item (`get`: None if it has none), held by this event alone until the block ends (its
        `lock`), as a Step holds its run (`Store.holding`): two events of one page never interleave on it."""
        item = self.get(key)
        if item is None:
            yield None
            return
        with item.lock:
            yield item

    @contextmanager
    def storing(self, key: str, item) -> Iterator:
        """`put` a new item already held by this event, so no other event finds it before this one is done."""
        with item.lock:
            self.put(key, item)
            yield item


STORE = Store()  # the app's one store, shared by every session and every tab


def release_run(run_id: str | None) -> None:
    """gr.State's delete_callback for a run id. A plain function, not the bound `STORE.release`: gradio deep-copies
    its config on every page load, and a bound method would copy the whole store with every run's model and cache."""
    STORE.release(run_id)
