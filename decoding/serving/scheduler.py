"""Continuous batching: one scheduler owns the model, and every session's next forward pass rides in its ticks.

A session (a `Run`) asks for a forward pass over its new tokens and waits; the scheduler's thread loops:
1) take: every pending decode row, plus prefill tokens up to `chunk_tokens` (chunked prefill: a long prompt is
   cut into chunks over several ticks, so it never stalls everyone's steps); with no step waiting, prompts take
   up to `WHOLE_PREFILL_TOKENS` a tick, and a short prompt alone goes whole;
2) pass: one packed forward pass over all of them (decoding.serving.ragged), or the plain solo pass when only
   one session is waiting or a session asked to run alone (then it is bit-for-bit the solo loop, = generate());
3) answer: each session gets the logits of its last token and how its pass ran (`Pass`), and samples with its
   own generator and settings in its own thread, so a seeded run draws exactly what it draws alone.
Sessions arrive and leave at every tick: nobody waits for a batch to fill or to finish. Every pass is taken as a
turn on the model (decoding.serving.turns), so beam searches, lesson experiments and measurements interleave.
The batched logits differ from the solo ones by float noise (the temperature-0 lesson); `noise` is that noise,
measured on this server when the scheduler starts.
"""

import copy
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import torch

from decoding.clock import Timer
from decoding.forward import forward_one, rewind
from decoding.models import LoadedModel
from decoding.serving import ragged
from decoding.serving.passes import Pass
from decoding.serving.traffic import Tick, TickLog
from decoding.serving.turns import Turns

CHUNK_TOKENS = 64  # prompt tokens per tick when others are waiting
WHOLE_PREFILL_TOKENS = 256  # prompt tokens in one pass when no step is waiting (a lone prompt this long: whole)
MAX_ROWS = 64  # sessions in one pass
# sessions answered by a tick come back within a millisecond or two (they sample, then ask again): waiting this
# long for them keeps them in one pass instead of splitting the class into a fast and a slow half
GATHER_S = 0.004


@dataclass
class _Work:
    cache: object
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


@dataclass(frozen=True)
class Noise:
    value: float  # largest |batched - solo| logit difference seen
    rows: int  # sessions in the calibration pass
    dtype: str


class Scheduler:
    def __init__(self, lm: LoadedModel, chunk_tokens: int = CHUNK_TOKENS, max_rows: int = MAX_ROWS):
        if not (isinstance(chunk_tokens, int) and 1 <= chunk_tokens <= 4096):
            raise ValueError(f"chunk_tokens must be an integer in [1, 4096], got {chunk_tokens!r}")
        ragged.install(lm)
        self.lm, self.chunk_tokens, self.max_rows = lm, chunk_tokens, max_rows
        self.turns, self.log = Turns(), TickLog()
        self.noise: Noise | None = None
        self._pending: deque[_Work] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._last_rows = 0

    # --- what a session calls ---

    def forward(self, ids: list[int], cache, position: int, alone: bool = False):
        """The float32 logits (V,) after feeding `ids` at `position` into `cache` (None: a new one), the cache,
        and how the pass ran. Blocks until a tick has computed it."""
        if not ids:
            raise ValueError("a forward pass needs at least one token")
        fresh = cache if cache is not None else ragged.new_cache(self.lm)
        work = _Work(fresh, list(ids), position, alone, decode=len(ids) == 1 and position > 0)
        self.start()
        with self._cond:
            self._pending.append(work)
            self._cond.notify()
        work.done.wait()
        if work.error is not None:
            raise work.error
        return work.logits, work.cache, work.passed

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
            try:
                with self.turns.turn("batched step"):
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
        for work in [w for w in taken if w.alone]:
            self._solo(work, "alone")
        shared = [w for w in taken if not w.alone]
        if not shared:
            return []
        if len(shared) == 1 and len(shared[0].ids) <= max(WHOLE_PREFILL_TOKENS, self.chunk_tokens):
            self._solo(shared[0], "solo")
            return []
        return self._packed(shared)

    def _solo(self, work: _Work, mode: str) -> None:
        with Timer(self.lm.device) as t:
            try:
                logits, work.cache = forward_one(self.lm, work.ids, work.cache, work.start)
            except Exception as err:  # noqa: BLE001 -- the session that asked gets the error, the server goes on
                return self._fail(work, err)
        prompt = 0 if work.decode else len(work.ids)
        self.log.add(
            Tick(at=time.time(), ms=t.ms, rows=1, decode_rows=int(work.decode), prefill_tokens=prompt, mode=mode)
        )
        self._answer(work, logits, Pass(work.ms + t.ms, 1, mode, work.chunks + 1))

    def _packed(self, shared: list[_Work]) -> list[_Work]:
        # chunks keep a prompt from stalling others' steps; with no step in the tick there is no one to stall, so
        # prompts go in bigger bites (a class pressing Prefill at once: 30 prompts in two passes, not five)
        stepping = any(w.decode for w in shared)
        rows, budget, later = [], self.chunk_tokens if stepping else max(self.chunk_tokens, WHOLE_PREFILL_TOKENS), []
        for work in shared:
            if len(rows) >= self.max_rows or (len(work.ids) > 1 and budget <= 0):
                later.append(work)
                continue
            take = 1 if len(work.ids) == 1 else min(len(work.ids), budget)
            budget -= take if len(work.ids) > 1 else 0
            rows.append((work, take))
        segments = [ragged.Segment(w.cache, w.ids[:n], w.start) for w, n in rows]
        lengths = [w.cache.get_seq_length() for w, _ in rows]
        try:
            with Timer(self.lm.device) as t:
                logits = ragged.packed_forward(self.lm, segments)  # (S, V)
        except Exception:  # noqa: BLE001 -- undo what the pass wrote, then give each session its own pass
            for (work, _), length in zip(rows, lengths):
                rewind(work.cache, length)
            for work, _ in rows:
                self._solo(work, "solo")
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
            if work.ids:
                later.append(work)  # more of its prompt next tick
            else:
                self._answer(
                    work, logits[i], Pass(ms=work.ms, rows=len(rows), mode="packed", chunks=work.chunks, noise=noise)
                )
        return later

    def _answer(self, work: _Work, logits: torch.Tensor, passed: Pass) -> None:
        work.logits, work.passed = logits, passed
        work.done.set()

    def _fail(self, work: _Work, err: BaseException) -> None:
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
        return self.noise


_SCHEDULERS: dict[tuple, Scheduler] = {}
_SCHEDULERS_LOCK = threading.Lock()


def scheduler_for(lm: LoadedModel) -> Scheduler:
    """The server's one scheduler for this loaded model (made on first use)."""
    key = (lm.model_id, str(lm.device), lm.dtype_name)
    with _SCHEDULERS_LOCK:
        if key not in _SCHEDULERS:
            _SCHEDULERS[key] = Scheduler(lm)
        return _SCHEDULERS[key]
