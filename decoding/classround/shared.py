"""A class round's state in Redis (`--store redis://host:port/db`): a lecture hall's replicas share every round, so a
round started on one is joined, drawn from and revealed from any other (decoding/classround/state.py says what is
state and what each method promises).

Every change is one Redis operation that cannot interleave with another: a Lua script (a seat's join, a draw's count,
a guess against the reveal, a seat's token bucket) or a MULTI/EXEC transaction (the teacher's changes), never a value
read into Python, changed and written back. A student's generator is the one exception that needs a lock: its state
is read, drawn with and written back under a Redis lock on that student alone (their draws, one at a time, in order,
whichever replica draws them: their own page's, or the teacher's Draw 100 each).

Keys, all under `lab:round:<code>:` and each kept `keep_s` after its last write (the round's idle end comes first):
`setup` (JSON), `meta` (a hash of JSON values: the fields), `seats` (student -> JSON), `d<n>:counts`, `d<n>:total`,
`d<n>:by`, `d<n>:last` (draw n's tallies), `g<step>` (student -> token), `gr<start>` (student -> "token|rows|mode;..."),
`c:<name>` and `ci:<name>` (what the model computed, float32 bytes, and its info; `computed` names them),
`gen:<student>` (a generator's state). A code is claimed once with SET NX (`claim`), so two replicas never hand out
the same code.
"""

import contextlib
import dataclasses
import json
import time
from collections import Counter

import redis
import torch

from decoding.classround.records import Appended, Token
from decoding.classround.state import Fields, RoundState, SeatState, Setup, Tally
from decoding.pipeline import SamplerSettings

PREFIX = "lab:round:"
KEEP_S = 2 * 3600  # a round's keys outlive its idle end (30 minutes by default) and what its ended page shows
CLAIM_S = 24 * 3600  # a code is not given out again for a day: a student's old link never finds a new round
GENERATOR_WAIT_S = 10.0  # the longest a draw waits for the student's generator (Draw 1000 each holds it longest)

JOIN = """
local raw = redis.call('HGET', KEYS[2], ARGV[1])
local seat
if raw then
  seat = cjson.decode(raw)
  if seat.removed then return 'removed' end
end
local locked = redis.call('HGET', KEYS[1], 'locked') == 'true'
if locked and ((not raw) or seat.left) then return 'locked' end
if not raw then
  seat = {seed = tonumber(ARGV[2]), removed = false, allowance = tonumber(ARGV[4]), checked = tonumber(ARGV[3])}
end
seat.left = false
seat.heard = tonumber(ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(seat))
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'last_active', ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 'joined'
"""

# ARGV[2]: 'heard' (now in ARGV[3]), 'leave' or 'remove'; returns 1 when the seat changed
SEAT = """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local seat = cjson.decode(raw)
if ARGV[2] == 'heard' then
  if seat.left or seat.removed then return 0 end
  seat.heard = tonumber(ARGV[3])
elseif ARGV[2] == 'leave' then
  if seat.left then return 0 end
  seat.left = true
else
  seat.removed = true
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(seat))
return 1
"""

# a seat's token bucket: ARGV now, rate, burst; 1 when a draw is allowed (and taken from the bucket)
ALLOW = """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local seat = cjson.decode(raw)
local now, rate, burst = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
seat.allowance = math.min(burst, seat.allowance + (now - seat.checked) * rate)
seat.checked = now
local allowed = 0
if seat.allowance >= 1 - 1e-9 then
  seat.allowance = seat.allowance - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(seat))
return allowed
"""

SWEPT = """
if redis.call('HGET', KEYS[1], 'absent') ~= ARGV[1] then
  redis.call('HSET', KEYS[1], 'absent', ARGV[1])
  redis.call('HINCRBY', KEYS[1], 'version', 1)
end
return 0
"""

# KEYS meta, counts, total, by, last, setup, seats; ARGV now, keep, then (student, "token,token,...") pairs
COUNT = """
local total = tonumber(redis.call('GET', KEYS[3]) or '0')
for i = 3, #ARGV, 2 do
  local student, tokens = ARGV[i], ARGV[i + 1]
  for token in string.gmatch(tokens, '[^,]+') do
    redis.call('HINCRBY', KEYS[2], token, 1)
    total = total + 1
  end
  local before = redis.call('HGET', KEYS[4], student)
  if before then tokens = before .. ',' .. tokens end
  redis.call('HSET', KEYS[4], student, tokens)
  redis.call('HSET', KEYS[5], student, total)
end
redis.call('SET', KEYS[3], total, 'EX', ARGV[2])
for k = 1, #KEYS do redis.call('EXPIRE', KEYS[k], ARGV[2]) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'last_active', ARGV[1])
return total
"""

# KEYS meta, guesses, setup, seats; ARGV step, student, token, now, keep; 0 once that step's guesses are revealed
GUESS = """
if redis.call('HGET', KEYS[1], 'revealed') == 'true' and redis.call('HGET', KEYS[1], 'step') == ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
for k = 1, #KEYS do redis.call('EXPIRE', KEYS[k], ARGV[5]) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'last_active', ARGV[4])
return 1
"""

# KEYS meta, steps, setup, seats; ARGV student, "token|rows|mode", now, keep
GREEDY_STEP = """
local before = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], before and (before .. ';' .. ARGV[2]) or ARGV[2])
for k = 1, #KEYS do redis.call('EXPIRE', KEYS[k], ARGV[4]) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'last_active', ARGV[3])
return 1
"""

CLOSE = """
local ended = redis.call('HGET', KEYS[1], 'ended')
if ended and ended ~= 'null' then return 0 end
redis.call('HSET', KEYS[1], 'ended', ARGV[1], 'moved_to', ARGV[2], 'last_active', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HINCRBY', KEYS[1], 'shown', 1)
return 1
"""


def connect(url: str) -> redis.Redis:
    """A client for `url` (redis://host:port/db), checked at once: a hall whose Redis is not there says so as it
    starts, not at the first student's click."""
    try:
        client = redis.Redis.from_url(url)
    except ValueError as err:
        raise ValueError(f"--store must be a Redis address like redis://127.0.0.1:6379/0, got {url!r}: {err}") from None
    try:
        client.ping()
    except redis.RedisError as err:
        raise ValueError(f"no Redis answers at {url} (--store): {err}") from None
    return client


def claim(client: redis.Redis, code: str) -> bool:
    """Claim `code` for a new round (False: a round, on any replica, had it within a day)."""
    return bool(client.set(f"{PREFIX}{code}:claimed", 1, nx=True, ex=CLAIM_S))


def exists(client: redis.Redis, code: str) -> bool:
    return bool(client.exists(f"{PREFIX}{code}:setup"))


class RedisState(RoundState):
    """Round `code`'s state in Redis; one object per replica and round (it caches what never changes)."""

    clock = staticmethod(time.time)  # the replicas' one clock (a monotonic clock is each process's own)
    shared = True

    def __init__(self, client: redis.Redis, code: str, keep_s: int = KEEP_S):
        self.r, self.code, self.keep_s = client, code, keep_s
        self.at = f"{PREFIX}{code}:"
        self._round_keys = [self.at + "setup", self.at + "seats"]  # kept as long as the round is written to
        self._setup: Setup | None = None
        self._computed: dict[str, tuple[torch.Tensor, dict]] = {}  # never changes once written: read once
        self._scripts = {
            name: client.register_script(text)
            for name, text in dict(
                join=JOIN,
                seat=SEAT,
                allow=ALLOW,
                swept=SWEPT,
                count=COUNT,
                guess=GUESS,
                greedy=GREEDY_STEP,
                close=CLOSE,
            ).items()
        }

    # --- the round ---

    def create(self, setup, fields):
        with self.r.pipeline(transaction=True) as tx:
            tx.set(self.at + "setup", json.dumps(dataclasses.asdict(setup)), ex=self.keep_s)
            tx.hset(self.at + "meta", mapping=_encode(fields) | {"absent": "[]"})
            tx.expire(self.at + "meta", self.keep_s)
            tx.execute()
        self._setup = setup

    def setup(self):
        if self._setup is None:
            raw = self.r.get(self.at + "setup")
            if raw is None:
                raise ValueError(f"there is no round {self.code} in the shared store")
            d = json.loads(raw)
            self._setup = Setup(
                **d | {"prompt_ids": tuple(d["prompt_ids"]), "prompt_tokens": tuple(d["prompt_tokens"])}
            )
        return self._setup

    def fields(self):
        return _decode(self.r.hgetall(self.at + "meta"))

    def change(self, now, everyone=False, **changes):
        meta = self.at + "meta"
        with self.r.pipeline(transaction=True) as tx:
            values = {k: v for k, v in _encode_some(changes).items()}
            if values:
                tx.hset(meta, mapping=values)
            tx.hincrby(meta, "version", 1)
            tx.hincrby(meta, "shown", int(everyone))
            tx.hset(meta, "last_active", repr(float(now)))
            tx.expire(meta, self.keep_s)
            tx.expire(self.at + "setup", self.keep_s)
            tx.expire(self.at + "seats", self.keep_s)
            tx.execute()

    def close(self, now, why, moved_to):
        args = [json.dumps(why), json.dumps(moved_to), repr(float(now))]
        return bool(self._scripts["close"](keys=[self.at + "meta"], args=args))

    def touch(self, last_active):
        self.r.hset(self.at + "meta", "last_active", repr(float(last_active)))

    # --- seats ---

    def join(self, student, seed, now, allowance):
        keys = [self.at + "meta", self.at + "seats"]
        said = self._scripts["join"](keys=keys, args=[student, int(seed), repr(now), allowance, self.keep_s])
        return said.decode()

    def heard(self, student, now):
        self._scripts["seat"](keys=[self.at + "seats"], args=[student, "heard", repr(now)])

    def leave(self, student):
        return bool(self._scripts["seat"](keys=[self.at + "seats"], args=[student, "leave", 0]))

    def remove(self, student):
        return bool(self._scripts["seat"](keys=[self.at + "seats"], args=[student, "remove", 0]))

    def seats(self):
        seats = {}
        for student, raw in self.r.hgetall(self.at + "seats").items():
            d = json.loads(raw)
            seats[student.decode()] = SeatState(
                int(d["seed"]), d["heard"], bool(d["left"]), bool(d["removed"]), d["allowance"], d["checked"]
            )
        return seats

    def swept(self, absent):
        self._scripts["swept"](keys=[self.at + "meta"], args=[json.dumps(sorted(absent))])

    def allow(self, student, now, rate, burst):
        return bool(self._scripts["allow"](keys=[self.at + "seats"], args=[student, repr(now), rate, burst]))

    # --- draws, guesses, greedy steps ---

    def count(self, draw, drawn, now):
        d = f"{self.at}d{draw}:"
        keys = [self.at + "meta", d + "counts", d + "total", d + "by", d + "last", *self._round_keys]
        pairs = [x for student, tokens in drawn if tokens for x in (student, ",".join(map(str, tokens)))]
        return int(self._scripts["count"](keys=keys, args=[repr(now), self.keep_s, *pairs]))

    def tally(self, draw):
        d = f"{self.at}d{draw}:"
        with self.r.pipeline(transaction=True) as tx:
            tx.hgetall(d + "counts")
            tx.get(d + "total")
            tx.hgetall(d + "by")
            tx.hgetall(d + "last")
            counts, total, by, last = tx.execute()
        return Tally(
            Counter({int(t): int(n) for t, n in counts.items()}),
            int(total or 0),
            {s.decode(): [int(t) for t in tokens.split(b",")] for s, tokens in by.items()},
            {s.decode(): int(n) for s, n in last.items()},
        )

    def guess(self, step, student, token, now):
        keys = [self.at + "meta", f"{self.at}g{step}", *self._round_keys]
        return bool(self._scripts["guess"](keys=keys, args=[step, student, int(token), repr(now), self.keep_s]))

    def guesses(self, step):
        return {s.decode(): int(t) for s, t in self.r.hgetall(f"{self.at}g{step}").items()}

    def greedy_step(self, start, student, step, now):
        keys = [self.at + "meta", f"{self.at}gr{start}", *self._round_keys]
        token, rows, mode = step
        self._scripts["greedy"](keys=keys, args=[student, f"{token}|{rows}|{mode}", repr(now), self.keep_s])

    def greedy_steps(self, start):
        out = {}
        for student, raw in self.r.hgetall(f"{self.at}gr{start}").items():
            steps = [s.split("|") for s in raw.decode().split(";")]
            out[student.decode()] = [(int(t), int(rows), mode) for t, rows, mode in steps]
        return out

    # --- what the model computed, and each seat's generator ---

    def put_computed(self, name, tensor, **info):
        tensor = tensor.detach().to("cpu", torch.float32).contiguous()
        if "settings" in info:
            info = info | {"settings": dataclasses.asdict(info["settings"])}
        with self.r.pipeline(transaction=True) as tx:
            tx.set(f"{self.at}c:{name}", tensor.numpy().tobytes(), ex=self.keep_s)
            tx.set(f"{self.at}ci:{name}", json.dumps(info), ex=self.keep_s)
            tx.sadd(self.at + "computed", name)
            tx.expire(self.at + "computed", self.keep_s)
            tx.execute()

    def computed(self, name):
        if name not in self._computed:
            raw, info = self.r.mget(f"{self.at}c:{name}", f"{self.at}ci:{name}")
            if raw is None:
                raise ValueError(
                    f"round {self.code} has moved on since this page read it ({name} is no longer kept): press again"
                )
            info = json.loads(info)
            if "settings" in info:
                info["settings"] = SamplerSettings(**info["settings"])
            tensor = torch.frombuffer(bytearray(raw), dtype=torch.float32)
            self._computed = {k: v for k, v in list(self._computed.items())[-7:]} | {name: (tensor, info)}
        return self._computed[name]

    def prune(self, keep):
        self._computed = {name: held for name, held in self._computed.items() if name in keep}
        gone = [name for name in (n.decode() for n in self.r.smembers(self.at + "computed")) if name not in keep]
        if gone:
            with self.r.pipeline(transaction=True) as tx:
                tx.srem(self.at + "computed", *gone)
                tx.delete(*[f"{self.at}{c}:{name}" for name in gone for c in ("c", "ci")])
                tx.execute()

    @contextlib.contextmanager
    def generator(self, student, make):
        key = f"{self.at}gen:{student}"
        with self.r.lock(key + ":lock", timeout=GENERATOR_WAIT_S, blocking_timeout=GENERATOR_WAIT_S):
            generator = make()
            state = self.r.get(key)
            if state is not None:
                generator.set_state(torch.frombuffer(bytearray(state), dtype=torch.uint8))
            yield generator
            self.r.set(key, generator.get_state().numpy().tobytes(), ex=self.keep_s)


# --- the fields as the meta hash holds them: one JSON value each ---


def _encode_some(changes: dict) -> dict[str, str]:
    out = {}
    for name, value in changes.items():
        if name == "settings":
            value = dataclasses.asdict(value)
        elif name == "appended":
            value = [[a.token.id, a.token.text, a.token.p, a.how] for a in value]
        out[name] = json.dumps(value)
        if name == "appended":
            out["step"] = json.dumps(len(changes["appended"]))
    return out


def _encode(fields: Fields) -> dict[str, str]:
    return _encode_some({f.name: getattr(fields, f.name) for f in dataclasses.fields(fields)})


def _decode(meta: dict) -> Fields:
    if not meta:
        raise ValueError("this round is no longer in the shared store")
    d = {k.decode(): json.loads(v) for k, v in meta.items()}
    names = {f.name for f in dataclasses.fields(Fields)}
    values = {k: v for k, v in d.items() if k in names}
    values["settings"] = SamplerSettings(**values["settings"])
    values["appended"] = tuple(Appended(Token(i, text, p), how) for i, text, p, how in values["appended"])
    return Fields(**values)
