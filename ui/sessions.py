"""Live runs kept on the server, one per browser session.

A `Run` holds the KV cache (megabytes of tensors), so it never goes into `gr.State`: the page keeps
only a short run id, and this store maps the id to the run. Idle runs expire after a time to live;
the number of live runs and the total bytes of their KV caches are capped, so one classroom cannot
exhaust the server's memory. The store knows nothing of gradio: it raises `StoreFull` (a ValueError)
and the UI turns that into a message for the person in the browser.
"""

import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from decoding.loop import Run, kv_cache_bytes
from decoding.trace import Trace

# a teacher with a bigger class or server raises these through the environment
TTL_S = float(os.environ.get("DECODING_LAB_TTL_S", 30 * 60))
MAX_RUNS = int(os.environ.get("DECODING_LAB_MAX_RUNS", 48))
MAX_KV_BYTES = int(float(os.environ.get("DECODING_LAB_MAX_KV_GB", 2)) * 1024**3)


class StoreFull(ValueError):
    """No room for another live run right now."""


@dataclass
class Entry:
    """One session's run: live (`run` set) or a loaded trace replayed without a model (`run` None)."""

    trace: Trace
    run: Run | None = None
    view: object = None  # what the tab that owns the run shows of it (its own dataclass: the store never reads it)

    @property
    def kv_bytes(self) -> int:
        return kv_cache_bytes(self.run.cache) if self.run is not None and self.run.cache is not None else 0

    @property
    def reserved_bytes(self) -> int:
        """The KV cache this run will hold at its longest (prompt + max new tokens): what the caps count,
        so runs admitted now cannot outgrow the memory cap later as they step."""
        if self.run is None or self.run.cache is None or not self.run.ids:
            return 0
        per_token = self.kv_bytes / len(self.run.ids)
        return int(per_token * (len(self.run.prompt.ids) + self.trace.max_new_tokens))


class Expiring:
    """Items kept on the server by key, each dropped after `ttl_s` seconds without use. One lock guards every
    change, so a store's admission check and its insert happen together."""

    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic):
        self.ttl_s, self.clock = ttl_s, clock
        self._items: dict[str, tuple[object, float]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def live(self) -> list:
        with self._lock:
            self._expire()
            return [item for item, _ in self._items.values()]

    def _store(self, key: str, item, admit: Callable[[list], None]) -> None:
        """`item` under `key` (replacing what was there), unless `admit(the other live items)` raises."""
        with self._lock:
            self._items.pop(key, None)
            self._expire()
            admit([other for other, _ in self._items.values()])
            self._items[key] = (item, self.clock())

    def _find(self, key: str | None):
        """The item under `key` with its idle clock reset, or None."""
        with self._lock:
            self._expire()
            if key is None or key not in self._items:
                return None
            item = self._items[key][0]
            self._items[key] = (item, self.clock())
            return item

    def release(self, key: str | None) -> None:
        with self._lock:
            self._items.pop(key, None)

    def _expire(self) -> None:
        now = self.clock()
        for key in [k for k, (_, t) in self._items.items() if now - t > self.ttl_s]:
            del self._items[key]


class Capped(Expiring):
    """An expiring store that holds at most `cap` items; the next is refused, naming what they are."""

    def __init__(self, what: str, cap: int, ttl_s: float, clock: Callable[[], float] = time.monotonic):
        super().__init__(ttl_s, clock)
        self.what, self.cap = what, cap

    def put(self, key: str, item) -> None:
        self._store(key, item, self._admit)

    def _admit(self, others: list) -> None:
        if len(others) >= self.cap:
            raise ValueError(
                f"the server already holds {self.cap} {self.what} (the limit); idle ones are freed after "
                f"{self.ttl_s / 60:.0f} minutes: try again shortly"
            )

    def get(self, key: str | None):
        return self._find(key)


class RunStore(Expiring):
    def __init__(
        self,
        ttl_s: float = TTL_S,
        max_runs: int = MAX_RUNS,
        max_kv_bytes: int = MAX_KV_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ):
        super().__init__(ttl_s, clock)
        self.max_runs, self.max_kv_bytes = max_runs, max_kv_bytes

    def kv_bytes(self) -> int:
        return sum(e.kv_bytes for e in self.live())

    def put(self, entry: Entry, replace: str | None = None) -> str:
        """Store `entry` under a new id (releasing `replace`, the session's previous run, first)."""
        self.release(replace)
        run_id = uuid.uuid4().hex
        self._store(run_id, entry, lambda others: self._admit(entry, others))
        return run_id

    def _admit(self, entry: Entry, others: list[Entry]) -> None:
        if len(others) >= self.max_runs:
            raise StoreFull(
                f"the server already holds {len(others)} live runs (the limit is {self.max_runs}); "
                f"idle runs are freed after {self.ttl_s / 60:.0f} minutes: try again shortly"
            )
        used = sum(e.reserved_bytes for e in others)
        if used + entry.reserved_bytes > self.max_kv_bytes:
            raise StoreFull(
                f"the live runs' KV caches may grow to {used / 2**20:,.0f} MiB of the "
                f"{self.max_kv_bytes / 2**20:,.0f} MiB allowed, and this run needs "
                f"{entry.reserved_bytes / 2**20:,.0f} MiB more; try again shortly, or lower max new tokens"
            )

    def get(self, run_id: str | None) -> Entry:
        """The session's entry, its idle clock reset. Raises ValueError if it is gone."""
        entry = self._find(run_id)
        if entry is None:
            raise ValueError(
                "there is no run in this session (it may have expired after "
                f"{self.ttl_s / 60:.0f} idle minutes): press Prefill to start one"
            )
        return entry


STORE = RunStore()  # the app's one store, shared by every session


def release_run(run_id: str | None) -> None:
    """gr.State's delete_callback for a run id. A plain function, not the bound `STORE.release`: gradio deep-copies
    its config on every page load, and a bound method would copy the whole store with every run's model and cache."""
    STORE.release(run_id)
