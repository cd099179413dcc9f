"""Where rounds live, chosen once as the server starts (`serve`): in this process (`make run`), or in Redis when the
server is given one (`--store redis://host:port/db`, or DECODING_LAB_STORE: a lecture hall's replicas, `make hall`),
so a round started on one replica is joined, drawn from and revealed from any other (decoding/classround/state.py).

Either way each replica keeps its `Round` objects (its view of each round, with the KV caches it holds: the round's
own run where the teacher steps it, the greedy runs of the students it serves) in the server's one session store
(ui.sessions), under its memory cap. A round ends when no one has done anything in it for the store's time to live,
as an idle run is freed; an ended round keeps only what its students are shown."""

import os

from decoding.classround.codes import new_code, new_key
from decoding.classround.round import Round
from decoding.classround.state import LocalState
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings
from decoding.prompts import Prompt
from ui.alive import page_restarted
from ui.context import AppConfig, get_model, scheduler_for
from ui.sessions import STORE, TTL_S, kv_bytes_at

STORE_URL = "DECODING_LAB_STORE"  # the environment variable app.py's --store sets: a Redis address, or empty


def round_bytes(r: Round) -> int:
    """Its caches at their longest: a KV cache's bytes grow by the same amount each token, so one sum of tokens."""
    held = r.held_tokens()
    return kv_bytes_at(r.lm, sum(held)) if held else 0


# on the rounds' own budget (ui.sessions): never freed for runs, only once it has ended or expired
ROUNDS = STORE.kind(
    "class round",
    bytes_of=round_bytes,
    again="start a new round",
    smaller="start it on a shorter prompt",
    live=lambda r: r.ended is None,
)
_USED: set[str] = set()  # every code given out while this server runs: a student's old link never finds a new round


class Shared:
    """The rounds in Redis: a code claimed there (no two replicas give out one), a round another replica started
    found there and seen from here."""

    def __init__(self, url: str, config: AppConfig):
        from decoding.classround import shared

        self.shared, self.config = shared, config
        self.client = shared.connect(url)

    def new_code(self) -> str:
        return new_code(lambda c: not self.shared.claim(self.client, c))

    def state(self, code: str):
        return self.shared.RedisState(self.client, code, keep_s=max(self.shared.KEEP_S, int(2 * TTL_S)))

    def attach(self, code: str) -> Round | None:
        if not self.shared.exists(self.client, code):
            return None
        lm = get_model(self.config)
        r = Round.attach(lm, self.state(code), scheduler=scheduler_for(lm))
        ROUNDS.put(code, r)
        return r


_SHARED: Shared | None = None


def serve(config: AppConfig, url: str | None = None) -> None:
    """Choose where rounds live, once, as the app is built: Redis at `url` (default: DECODING_LAB_STORE), or, with
    none, this process."""
    global _SHARED
    url = os.environ.get(STORE_URL, "") if url is None else url
    _SHARED = Shared(url, config) if url else None


def shared() -> bool:
    """Whether this server's rounds are in a shared store (the page says what stays on each replica)."""
    return _SHARED is not None


def start(
    lm: LoadedModel, prompt: Prompt, settings: SamplerSettings, kind: str, teacher: dict | None
) -> tuple[Round, dict]:
    """A new round, its prompt read, in the store, and what the teacher's page keeps of it: {code, key}, the key's
    only copy outside the round. The teacher's last round (`teacher`: what their page kept) ends, and its students are
    sent on to the new one."""
    if _SHARED is None:
        code = new_code(lambda c: c in _USED)
        _USED.add(code)
        state = LocalState()
    else:
        code = _SHARED.new_code()
        state = _SHARED.state(code)
    key = new_key()
    r = Round(lm, prompt, settings, kind, code=code, key=key, scheduler=scheduler_for(lm), state=state).open()
    ROUNDS.put(code, r)
    before = _found(teacher.get("code")) if isinstance(teacher, dict) else None
    if before is not None and before.ended is None:
        before.end(teacher.get("key"), f"the teacher started round {code}", moved_to=code)
        keep(before)
    return r, {"code": code, "key": key}


def find(code: str | None) -> Round:
    """The round with this code, ended first if it has been idle too long; a ValueError that says why there is none."""
    r = _found(code)
    if r is None:
        # a page from before a restart holds a code of the server's last start (ui/alive.py)
        why = "the server restarted after this page was opened" if page_restarted() else "it may have ended"
        raise ValueError(f"there is no round {code} on this server ({why}): check the code on the projector")
    if r.ended is None and r.idle_s() > TTL_S:
        r.close(f"no one did anything in it for {TTL_S / 60:.0f} minutes")
        keep(r)
    return r


def keep(r: Round) -> None:
    """Store the round again, so the caps count the caches it holds now (a new greedy run, or none once ended)."""
    ROUNDS.put(r.code, r)


def _found(code: str | None) -> Round | None:
    """This replica's round `code`; in a shared store, one another replica started (or this one let go), seen from
    here."""
    if not code:
        return None
    try:
        r = ROUNDS.get(code)
    except ValueError:  # this replica let its copy go; the shared store may still hold the round
        if _SHARED is None:
            raise
        r = None
    return r if r is not None or _SHARED is None else _SHARED.attach(code)
