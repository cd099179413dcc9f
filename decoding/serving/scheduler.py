"""Continuous batching: one scheduler owns the model, and every session's next forward pass rides in its ticks.

A session (a `Run`) asks for a forward pass over its new tokens and waits; the scheduler's thread loops:
1) take: every pending decode row, plus prefill tokens up to `chunk_tokens` (chunked prefill: a long prompt is
   cut into chunks over several ticks, so it never stalls everyone's steps); with no one stepping (no step waiting,
   and none in the last `STEPPING_S`), prompts take up to `WHOLE_PREFILL_TOKENS` a tick, and a short prompt alone
   goes whole;
2) pass: one packed forward pass over all of them (decoding.serving.ragged), or the plain solo pass when only
   one session is waiting or a session asked to run alone (then it is bit-for-bit the solo loop, = generate());
   on the CPU, where the model fits, the packed pass and a solo decode pass are one TorchScript call that lets go
   of the interpreter lock for the whole pass (decoding.serving.scripted), with the same bits;
3) answer: each session gets the logits of its last token and how its pass ran (`Pass`), and samples with its
   own generator and settings in its own thread, so a seeded run draws exactly what it draws alone.
Sessions arrive and leave at every tick: nobody waits for a batch to fill or to finish. A prompt in chunks can be
stopped between two of them (`forward(stop=...)`: the student pressed Stop): it is dropped, and its session gets
`Cancelled` within a tick. Every pass is taken as a
turn on the model (decoding.serving.turns), so beam searches, lesson experiments and measurements interleave.
The batched logits differ from the solo ones by float noise (the temperature-0 lesson); `noise` is that noise,
measured on this server when the scheduler starts.

Before the pass, a new prompt asks the prefix cache (decoding.serving.prefix): a prompt identical to a cached one is
answered from it without a pass (the same logits the first one got); one that starts with cached blocks gets them
copied into its cache and prefills only the rest (which can differ from one pass over the whole prompt by float
noise: `prefix_noise`, measured at start too); and an identical prompt already being computed waits for it.
"""

import copy
import dataclasses
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from decoding.clock import Timer
from decoding.forward import filled_cache, forward_one, rewind
from decoding.models import LoadedModel
from decoding.passes import Pass
from decoding.serving import gil, ragged, scripted
from decoding.serving.prefix import BLOCK_TOKENS, PrefixCache
from decoding.serving.traffic import Tick, TickLog
from decoding.serving.turns import Turns
from decoding.watch import Cancelled

# prompt tokens per tick while others step (a teacher's server with more cores may raise it)
CHUNK_TOKENS = int(os.environ.get("DECODING_LAB_CHUNK_TOKENS", 64))
DEEP_TOKENS, MIN_CHUNK_TOKENS = 512, 16  # past this position a prompt's chunk shrinks (`Scheduler._chunk_at`)
WHOLE_PREFILL_TOKENS = 256  # prompt tokens in one pass when no one is stepping (a lone prompt this long: whole)
# a prompt its session may stop takes bites the last one's pace says end within this: Stop is read between two bites,
# and a bite of 256 tokens deep in a 3,000-token prompt took 0.9 s on the 2-core machine beside a busy core
STOPPABLE_BITE_MS = 300
# a class stepping leaves gaps of a few tens of ms between its steps (each student reads the answer, then asks again):
# a long prompt's big bite in such a gap (0.7 s at position 4,000 on 2 cores) would stall every next step, so prompts
# go in chunks until no step has come for this long
STEPPING_S = 1.0
MAX_ROWS = 64  # sessions in one pass
# sessions answered by a tick come back within a millisecond or two (they sample, then ask again): waiting this
# long for them keeps them in one pass instead of splitting the class into a fast and a slow half
GATHER_S = 0.004
# the prefix cache's own cap (the server's KV cap in ui.sessions bounds it too): 256 MiB is ~360 blocks of the
# bundled model in float32
PREFIX_BYTES = int(float(os.environ.get("DECODING_LAB_PREFIX_MB", 256)) * 2**20)


@dataclass(frozen=True)
class _Copy:
    """A prefix-cache answer's cache, made in the session's own thread once it is answered. The scheduler's thread
    goes on to the next session meanwhile: thirty students' copies made one after another on it were most of a class's
    first Prefill (a copy takes ~1 ms alone, 10 ms while the server's other threads want the interpreter lock)."""

    make: Callable[[], object]  # -> the session's new cache
    blocks: int  # the prompt's blocks copied (the page draws them)
    # from the pool (a whole prompt cached): the copy's time is the session's pass, and the pool's logits are cloned;
    # else from an identical prompt's pass it waited for, with logits cloned for it already
    from_pool: bool


@dataclass
class _Work:
    cache: object  # None for a new prompt until it needs a pass
    ids: list[int]  # tokens still to feed
    start: int  # their first position
    alone: bool
    decode: bool  # one token onto an existing cache (else a prompt, maybe in chunks)
    done: threading.Event = field(default_factory=threading.Event)
    logits: torch.Tensor | None = None
    passed: Pass | None = None
    error: BaseException | None = None
    chunks: int = 0
    ms: float = 0.0  # passes it was in so far
    pace: float = 0.0  # prompt tokens per ms in its last pass (0: none yet)
    stop: Callable[[], bool] | None = None  # true once its session asked to stop (a prompt is dropped between chunks)
    told: Callable[[int, int], None] | None = None  # told (tokens read, of) after each chunk of a prompt
    prompt: list[int] | None = None  # a new prompt (no cache yet): the prefix cache is asked, and keeps its blocks
    planned: bool = False  # the prefix cache was asked already (a prompt left for the next tick)
    reused: int = 0  # prompt tokens taken from the prefix cache
    followers: list["_Work"] = field(default_factory=list)  # identical prompts waiting for this one
    copy: _Copy | None = None  # answered from the prefix cache: its cache is still to be copied


def _cloned(layers: list[tuple[torch.Tensor, torch.Tensor]]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(keys.clone(), values.clone()) for keys, values in layers]


@dataclass(frozen=True)
class Noise:
    value: float  # largest |batched - solo| logit difference seen
    rows: int  # sessions in the calibration pass
    dtype: str


class Scheduler:
    def __init__(
        self,
        lm: LoadedModel,
        chunk_tokens: int = CHUNK_TOKENS,
        max_rows: int = MAX_ROWS,
        prefix_bytes: int = PREFIX_BYTES,
    ):
        if not (isinstance(chunk_tokens, int) and 1 <= chunk_tokens <= 4096):
            raise ValueError(f"chunk_tokens must be an integer in [1, 4096], got {chunk_tokens!r}")
        ragged.install(lm)
        self.lm, self.chunk_tokens, self.max_rows = lm, chunk_tokens, max_rows
        self.turns, self.log = Turns(), TickLog()
        self.prefix = PrefixCache(prefix_bytes)  # 0 bytes: prefix caching off
        self._computing: dict[tuple[int, ...], _Work] = {}  # new prompts in their passes, by their tokens
        self.noise: Noise | None = None
        self.prefix_noise: float | None = None  # largest |cached prefix + rest - whole prompt| logit difference
        self._pending: deque[_Work] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._last_rows = 0
        self._stepped_at = -STEPPING_S  # time.monotonic() of the last tick with a step in it

    # --- what a session calls ---

    def forward(
        self,
        ids: list[int],
        cache,
        position: int,
        alone: bool = False,
        stop: Callable[[], bool] | None = None,
        told: Callable[[int, int], None] | None = None,
    ):
        """The float32 logits (V,) after feeding `ids` at `position` into `cache` (None: a new one), the cache,
        and how the pass ran. Blocks until a tick has computed it. `stop()` true between two chunks of a prompt:
        `Cancelled`, and what the chunks wrote is dropped. `told(read, of)` after each chunk of a prompt that goes in
        several: how far it is (the page shows it while it waits)."""
        if not ids:
            raise ValueError("a forward pass needs at least one token")
        prompt = list(ids) if cache is None and position == 0 else None
        decode = len(ids) == 1 and position > 0
        work = _Work(cache, list(ids), position, alone, decode=decode, prompt=prompt, stop=stop, told=told)
        self.start()
        with self._cond:
            self._pending.append(work)
            self._cond.notify()
        work.done.wait()
        if work.error is not None:
            raise work.error
        if work.copy is not None:
            return self._copied(work)
        return work.logits, work.cache, work.passed

    def _copied(self, work: _Work):
        """A prefix-cache answer, completed in the session's own thread: its cache copied, its logits its own."""
        with Timer(self.lm.device) as t:
            cache = work.copy.make()
        self.prefix.remember(cache, work.prompt, copied=work.copy.blocks)
        if work.copy.from_pool:
            return work.logits.clone(), cache, dataclasses.replace(work.passed, ms=t.ms)
        return work.logits, cache, work.passed

    # --- the tick loop ---

    def start(self) -> None:
        """Start the tick thread (it first measures the batching noise); idempotent, and the first step starts it."""
        with self._cond:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._loop, name="decoding-lab-scheduler", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        try:
            self.calibrate()
        except Exception:  # noqa: BLE001 -- without a measured noise the steps still run; the page leaves it out
            self.noise = None
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending)
                self._cond.wait_for(lambda: len(self._pending) >= self._last_rows, timeout=GATHER_S)
                taken = list(self._pending)
                self._pending.clear()
            taken = [work for work in taken if not self._stopped(work)]
            if not taken:
                continue
            try:
                with self.turns.turn("batched step"), gil.urgent():  # its passes first in line for the lock
                    leftover = self._tick(taken)
            except Exception as err:  # noqa: BLE001 -- a bug in a tick fails its sessions, never the server
                for work in taken:
                    self._fail(work, err)
                leftover = []
            self._last_rows = len(taken)
            with self._cond:
                self._pending.extendleft(reversed(leftover))  # unfinished prefills keep their place

    def _tick(self, taken: list[_Work]) -> list[_Work]:
        """Run one tick over `taken`; return the work that needs more ticks (the rest of chunked prefills)."""
        taken = [w for w in taken if not self._from_prefix_cache(w)]
        if any(w.decode for w in taken):
            self._stepped_at = time.monotonic()
        for work in taken:
            if work.cache is None:  # made only now: a prompt the prefix cache answers gets its copy instead
                work.cache = ragged.new_cache(self.lm)
        for work in [w for w in taken if w.alone]:
            self._solo(work, "alone")
        shared = [w for w in taken if not w.alone]
        if not shared:
            return []
        if len(shared) == 1 and len(shared[0].ids) <= self._stoppable(shared[0], self._bite(shared)):
            self._solo(shared[0], "solo")
            return []
        return self._packed(shared)

    def _solo(self, work: _Work, mode: str, origin: str = "computed") -> None:
        impl = "modules"
        with Timer(self.lm.device) as t:
            try:
                if mode == "solo" and work.decode and scripted.fits(self.lm, [work.cache]):
                    # one decode row: the scripted pass computes bit for bit what forward_one does (test_scripted.py),
                    # without waiting for the interpreter lock at each of its operations
                    logits = ragged.scripted_forward(self.lm, [ragged.Segment(work.cache, work.ids, work.start)])[0]
                    impl = "scripted"
                else:
                    logits, work.cache = forward_one(self.lm, work.ids, work.cache, work.start)
            except Exception as err:  # noqa: BLE001 -- the session that asked gets the error, the server goes on
                return self._fail(work, err)
        prompt = 0 if work.decode else len(work.ids)
        self.log.add(
            Tick(at=time.time(), ms=t.ms, rows=1, decode_rows=int(work.decode), prefill_tokens=prompt, mode=mode)
        )
        self._answer(work, logits, Pass(work.ms + t.ms, 1, mode, work.chunks + 1, impl=impl, origin=origin))

    def _stepping(self, shared: list[_Work]) -> bool:
        return any(w.decode for w in shared) or time.monotonic() - self._stepped_at < STEPPING_S

    def _bite(self, shared: list[_Work]) -> int:
        """Prompt tokens this tick may take: a chunk while anyone is stepping, else a bigger bite."""
        return self.chunk_tokens if self._stepping(shared) else max(self.chunk_tokens, WHOLE_PREFILL_TOKENS)

    def _stoppable(self, work: _Work, tokens: int) -> int:
        """`tokens`, or fewer for a prompt its session may stop (Stop is read between two bites): as many as its last
        pass's pace says take `STOPPABLE_BITE_MS`, never under `MIN_CHUNK_TOKENS`."""
        if work.stop is None or not work.pace:
            return tokens
        return min(tokens, max(MIN_CHUNK_TOKENS, int(STOPPABLE_BITE_MS * work.pace)))

    def _chunk_at(self, position: int) -> int:
        """A prompt's chunk while others step, deeper into a long prompt smaller: each chunk also reads the whole cache
        so far (its attention, and the copy that appends to it), so at position 4,000 a chunk of 16 added 90 ms to ten
        students' 69 ms tick and one of 64 added 195 (2-core Xeon, in-process); halved each time the position
        doubles past `DEEP_TOKENS`, never under `MIN_CHUNK_TOKENS`."""
        return max(
            min(MIN_CHUNK_TOKENS, self.chunk_tokens), self.chunk_tokens * DEEP_TOKENS // max(position, DEEP_TOKENS)
        )

    def _admitted(self, shared: list[_Work]) -> tuple[list[tuple[_Work, int]], list[_Work]]:
        """What this tick takes: (work, tokens of it) for every step (one token each) up to `max_rows`, and prompts'
        tokens up to the tick's prefill budget; and the work left for a later tick."""
        # chunks keep a prompt from stalling others' steps; with no one stepping there is no one to stall, so prompts
        # go in bigger bites (a class pressing Prefill at once: 30 prompts in two passes, not five)
        budget, stepping = self._bite(shared), self._stepping(shared)
        rows, later = [], []
        for work in shared:
            prompt = len(work.ids) > 1
            if len(rows) >= self.max_rows or (prompt and budget <= 0):
                later.append(work)
                continue
            deep = self._chunk_at(work.start) if stepping else budget
            take = min(len(work.ids), budget, self._stoppable(work, deep)) if prompt else 1
            if prompt:
                budget -= take
            rows.append((work, take))
        return rows, later

    def _packed(self, shared: list[_Work]) -> list[_Work]:
        rows, later = self._admitted(shared)
        segments = [ragged.Segment(w.cache, w.ids[:n], w.start) for w, n in rows]
        lengths = [w.cache.get_seq_length() for w, _ in rows]
        try:
            with Timer(self.lm.device) as t:
                logits, impl = ragged.packed_pass(self.lm, segments)  # (S, V)
        except Exception:  # noqa: BLE001 -- undo what the pass wrote, then give each session its own pass
            for (work, _), length in zip(rows, lengths):
                rewind(work.cache, length)
            for work, _ in rows:
                self._solo(work, "solo", origin="fallback")
            return later
        prefill = sum(n for w, n in rows if not w.decode)
        self.log.add(
            Tick(
                at=time.time(),
                ms=t.ms,
                rows=len(rows),
                decode_rows=sum(w.decode for w, _ in rows),
                prefill_tokens=prefill,
                mode="packed",
            )
        )
        noise = self.noise.value if self.noise else 0.0
        for i, (work, n) in enumerate(rows):
            work.ids, work.start, work.chunks, work.ms = work.ids[n:], work.start + n, work.chunks + 1, work.ms + t.ms
            work.pace = n / max(t.ms, 1e-3) if n > 1 else work.pace
            if work.ids:
                later.append(work)  # more of its prompt next tick
                if work.told is not None:
                    work.told(work.start, work.start + len(work.ids))
            else:
                self._answer(
                    work,
                    logits[i],
                    Pass(ms=work.ms, rows=len(rows), mode="packed", chunks=work.chunks, noise=noise, impl=impl),
                )
        return later

    # --- the prefix cache ---

    def _from_prefix_cache(self, work: _Work) -> bool:
        """Before its first pass, a new prompt takes what the prefix cache holds: True if that answered it (or an
        identical prompt being computed will), False if it still needs a pass (over what the cache lacks)."""
        if work.prompt is None or work.planned or work.alone or self.prefix.max_bytes == 0:
            return False  # alone: its own pass over the whole prompt, bit-exact with generate()
        work.planned = True
        leader = self._computing.get(tuple(work.prompt))
        if leader is not None:
            leader.followers.append(work)
            self.prefix.count_reuse(work.prompt)
            return True
        hit = self.prefix.find(work.prompt)
        if hit.end is not None:  # the whole prompt: its first computation's logits, exactly
            config, first = self.lm.model.config, hit.end.passed
            work.copy = _Copy(lambda: self.prefix.copy_into(hit, config), len(hit.blocks) + 1, from_pool=True)
            # the pool's logits, read-only (the session clones them); the pass's time is the copy's, once made
            pooled = Pass(
                0.0, first.rows, "cached", noise=first.noise, computed_ms=first.ms, impl=first.impl, origin="pool"
            )
            self._answer(work, hit.end.logits, pooled)
            return True
        if hit.blocks:  # a shared start: prefill only the rest, against the copied blocks
            work.cache = self.prefix.copy_into(hit, self.lm.model.config)
            work.reused = hit.tokens
            work.ids, work.start = work.ids[hit.tokens :], hit.tokens
        self._computing[tuple(work.prompt)] = work
        return False

    def _keep_prefix(self, work: _Work, logits: torch.Tensor, passed: Pass) -> Pass:
        """A new prompt computed: keep its blocks, answer the identical prompts that waited for it, and say how its
        own pass ran (a shared start makes it a "prefix" pass, with that noise)."""
        self._computing.pop(tuple(work.prompt), None)
        if work.reused:
            noise = max(passed.noise, self.prefix_noise or 0.0)
            passed = dataclasses.replace(passed, mode="prefix", noise=noise)
        if self.prefix.max_bytes:
            self.prefix.keep(work.prompt, work.cache, logits, passed)
            self.prefix.remember(work.cache, work.prompt, copied=work.reused // BLOCK_TOKENS)
        # the prompt's keys and values as they stand: a cache's update makes new tensors, so the leader's next steps
        # never write these, and each follower copies them in its own thread
        layers = [(layer.keys, layer.values) for layer in work.cache.layers]
        config, blocks = self.lm.model.config, (len(work.prompt) - 1) // BLOCK_TOKENS + 1
        for follower in work.followers:
            follower.copy = _Copy(lambda: filled_cache(config, _cloned(layers)), blocks, from_pool=False)
            waited = Pass(
                passed.ms,
                passed.rows,
                "cached",
                noise=passed.noise,
                computed_ms=passed.ms,
                impl=passed.impl,
                origin="in flight",
            )
            self._answer(follower, logits.clone(), waited)  # cloned now: the leader's session may change its logits
        return passed

    def _answer(self, work: _Work, logits: torch.Tensor, passed: Pass) -> None:
        if work.prompt is not None and self._computing.get(tuple(work.prompt)) is work:
            passed = self._keep_prefix(work, logits, passed)
        elif work.prompt is not None and work.alone:  # computed whole, on its own: drawn as its own blocks
            self.prefix.remember(work.cache, work.prompt, copied=0)
        work.logits, work.passed = logits, passed
        work.done.set()

    def _stopped(self, work: _Work) -> bool:
        """Whether `work`'s session asked to stop it: then it is answered `Cancelled`, and identical prompts that
        waited for it are asked again, each on its own."""
        if work.stop is None or not work.stop():
            return False
        followers = work.followers if self._computing.get(tuple(work.prompt or ())) is work else []
        work.followers = []
        self._fail(work, Cancelled(f"stopped after {work.start:,} of {work.start + len(work.ids):,} prompt tokens"))
        for follower in followers:
            follower.planned, follower.copy = False, None
            with self._cond:
                self._pending.append(follower)
        return True

    def _fail(self, work: _Work, err: BaseException) -> None:
        if work.prompt is not None and self._computing.get(tuple(work.prompt)) is work:
            del self._computing[tuple(work.prompt)]
            for follower in work.followers:
                self._fail(follower, err)
        work.error = err
        work.done.set()

    # --- the batching noise on this server ---

    def calibrate(self, prompts=("The weather today", "Once upon a time, in a land far away, there lived", "2 + 2 =")):
        """Decode one token for a few sessions both ways, packed and each alone; keep the largest logit difference."""
        with self.turns.turn("measuring the batching noise"):
            caches, last = [], []
            for text in prompts:
                ids = self.lm.tokenizer(text).input_ids
                logits, cache = forward_one(self.lm, ids, None, 0)
                caches.append((cache, len(ids)))
                last.append(int(logits.argmax()))
            solo = [forward_one(self.lm, [tok], copy.deepcopy(c), n)[0] for (c, n), tok in zip(caches, last)]
            segments = [ragged.Segment(c, [tok], n) for (c, n), tok in zip(caches, last)]
            packed = ragged.packed_forward(self.lm, segments)  # (S, V)
            diff = max(float((p - s).abs().max()) for p, s in zip(packed, solo))
            self.noise = Noise(diff, len(prompts), self.lm.dtype_name)
            self.prefix_noise = self._measure_prefix_noise(" ".join(prompts))
        return self.noise

    def _measure_prefix_noise(self, text: str) -> float:
        """One prompt of a block and a few tokens, computed whole and as a cached block + the rest."""
        ids = (self.lm.tokenizer(text).input_ids * BLOCK_TOKENS)[: BLOCK_TOKENS + 4]
        whole, _ = forward_one(self.lm, ids, None, 0)
        _, block = forward_one(self.lm, ids[:BLOCK_TOKENS], None, 0)
        rest, _ = forward_one(self.lm, ids[BLOCK_TOKENS:], block, BLOCK_TOKENS)
        return float((whole - rest).abs().max())


_SCHEDULERS: dict[tuple, Scheduler] = {}
_SCHEDULERS_LOCK = threading.Lock()


def scheduler_for(lm: LoadedModel) -> Scheduler:
    """The server's one scheduler for this loaded model (made on first use)."""
    key = (lm.model_id, str(lm.device), lm.dtype_name)
    with _SCHEDULERS_LOCK:
        if key not in _SCHEDULERS:
            _SCHEDULERS[key] = Scheduler(lm)
        return _SCHEDULERS[key]
