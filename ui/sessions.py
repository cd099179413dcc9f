"""Everything a browser session holds on the server: live runs, beam searches and speculative runs, in one store.

Each of them holds a KV cache (megabytes of tensors), so it never goes into `gr.State`: the page keeps only a short
id, and this store maps the id to the item. One time to live frees idle items; one count cap and one byte cap bound
them all, each item counted by its KV cache at its longest, so one classroom that opens every tab cannot exhaust
the server's memory. When a new item would break a cap, the least recently used items of any kind are freed to make
room, and their sessions are told so on their next action. The store knows nothing of gradio: it raises
ValueErrors (`StoreFull` for an item too big for an empty store) and the UI turns them into messages.

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
from ui.running import Running

# a teacher with a bigger class or server raises these through the environment
TTL_S = float(os.environ.get("DECODING_LAB_TTL_S", 30 * 60))
# runs, beam searches and speculative runs together: a lecture hall of 100 with a run on two tabs each and room to
# spare (at 96, a class of 100 stepping at once had its oldest runs freed). Memory is guarded by the KV cap below,
# which counts every run at its longest; a run's other state (its last logits, its trace) is a few hundred KB.
MAX_ITEMS = int(os.environ.get("DECODING_LAB_MAX_RUNS", 256))
MAX_KV_BYTES = int(float(os.environ.get("DECODING_LAB_MAX_KV_GB", 2)) * 1024**3)
TOLD_MAX = 1024  # why a session's item was freed, kept until it comes back; the oldest reasons are forgotten first


class StoreFull(ValueError):
    """An item bigger than the whole memory cap."""


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
    item: object
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
    ):
        self.ttl_s, self.max_items, self.max_kv_bytes, self.clock = ttl_s, max_items, max_kv_bytes, clock
        self._held: OrderedDict[tuple[str, str], _Held] = OrderedDict()
        self._told: OrderedDict[tuple[str, str], str] = OrderedDict()  # why an item is gone, until its session asks
        self._lock = threading.Lock()
        self._pools: list = []  # shared pools counted under the byte cap (`share`)
        self.runs = self.kind(
            "run", bytes_of=lambda entry: entry.reserved_bytes, again="press Prefill", smaller="lower max new tokens"
        )

    def kind(self, what: str, *, bytes_of: Callable[[object], int], again: str, smaller: str) -> "Kind":
        """A view of this store for one kind of item, e.g. `STORE.kind("beam search", ..., "press Step", ...)`."""
        return Kind(store=self, what=what, bytes_of=bytes_of, again=again, smaller=smaller)

    def __len__(self) -> int:
        return len(self._held)

    def kv_bytes(self) -> int:
        """What the caps count: every live item's KV cache at its longest, and the shared pools."""
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
            items = sum(held.nbytes for held in self._held.values())
            others = sum(p.nbytes for p in self._pools if p is not pool)
        return max(0, self.max_kv_bytes - items - others)

    def put(self, entry: Entry, replace: str | None = None) -> str:
        """Store a step or constrained run under a new id (releasing `replace`, the session's previous run, first)."""
        self.release(replace)
        run_id = uuid.uuid4().hex
        self.runs.put(run_id, entry)
        return run_id

    def get(self, run_id: str | None) -> Entry:
        """The session's run, its idle clock reset. Raises ValueError if it is gone, saying why when the store knows."""
        entry = self.runs.get(run_id)
        if entry is None and run_id is None:  # the page never started one: not a run that expired
            raise ValueError("Press Prefill first: there is no run in this session yet")
        if entry is None:
            raise ValueError(
                "there is no run in this session (it may have expired after "
                f"{self.ttl_s / 60:.0f} idle minutes): press Prefill to start one"
            )
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
        """`item` under `key`, replacing the session's own; the least recently used others are freed to make room."""
        nbytes = kind.bytes_of(item)
        if nbytes > self.max_kv_bytes:
            raise StoreFull(
                f"this {kind.what} needs {nbytes / 2**20:,.0f} MiB of KV cache at its longest, more than the "
                f"{self.max_kv_bytes / 2**20:,.0f} MiB the server allows for every session together: {kind.smaller}"
            )
        with self._lock:
            self._forget((kind.what, key))
            self._expire()
            self._make_room(nbytes)
            self._held[kind.what, key] = _Held(kind, item, nbytes, self.clock())

    def find(self, kind: "Kind", key: str | None):
        """The item with its idle clock reset; None if there is none; a ValueError, once, if it was freed."""
        with self._lock:
            self._expire()
            told = self._told.pop((kind.what, key), None)
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

    def _make_room(self, nbytes: int) -> None:
        used = sum(held.nbytes for held in self._held.values()) + sum(pool.nbytes for pool in self._pools)
        for pool in self._pools:  # shared blocks are recomputed at the next prompt; a session's run is lost
            if used + nbytes > self.max_kv_bytes:
                used -= pool.free(used + nbytes - self.max_kv_bytes)
        while self._held and (len(self._held) >= self.max_items or used + nbytes > self.max_kv_bytes):
            if len(self._held) >= self.max_items:
                cap = f"it holds at most {self.max_items} runs, beam searches and speculative runs"
            else:
                cap = f"it holds at most {self.max_kv_bytes / 2**20:,.0f} MiB of KV cache"
            key, held = self._held.popitem(last=False)
            used -= held.nbytes
            self._tell(key, held, f"was freed to make room for newer sessions on the server ({cap})")

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
    smaller: str  # how to ask for one that fits, when one alone is over the cap

    def put(self, key: str, item) -> None:
        self.store.hold(self, key, item)

    def get(self, key: str | None):
        """The session's item, its idle clock reset; None if it has none; a ValueError saying why if it was freed
        (told once: the next call starts afresh)."""
        return self.store.find(self, key)

    def release(self, key: str | None) -> None:
        self.store.drop(self, key)


STORE = Store()  # the app's one store, shared by every session and every tab


def release_run(run_id: str | None) -> None:
    """gr.State's delete_callback for a run id. A plain function, not the bound `STORE.release`: gradio deep-copies
    its config on every page load, and a bound method would copy the whole store with every run's model and cache."""
    STORE.release(run_id)
