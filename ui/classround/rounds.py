"""Where rounds live: the server's one session store (ui.sessions), under its memory cap, each counted by the KV caches
it holds at their longest (its own run and each student's greedy run). A round ends when no one has done anything in
it for the store's time to live, as an idle run is freed; an ended round keeps only what its students are shown."""

from decoding.classround.codes import new_code, new_key
from decoding.classround.round import Round
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings
from decoding.prompts import Prompt
from ui.alive import page_restarted
from ui.context import scheduler_for
from ui.sessions import STORE, TTL_S, kv_bytes_at


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


def start(
    lm: LoadedModel, prompt: Prompt, settings: SamplerSettings, kind: str, teacher: dict | None
) -> tuple[Round, dict]:
    """A new round, its prompt read, in the store, and what the teacher's page keeps of it: {code, key}, the key's
    only copy outside the round. The teacher's last round (`teacher`: what their page kept) ends, and its students are
    sent on to the new one."""
    code, key = new_code(lambda c: c in _USED), new_key()
    _USED.add(code)
    r = Round(lm, prompt, settings, kind, code=code, key=key, scheduler=scheduler_for(lm)).open()
    ROUNDS.put(code, r)
    before = ROUNDS.get(teacher.get("code")) if isinstance(teacher, dict) else None
    if before is not None and before.ended is None:
        before.end(teacher.get("key"), f"the teacher started round {code}", moved_to=code)
        keep(before)
    return r, {"code": code, "key": key}


def find(code: str | None) -> Round:
    """The round with this code, ended first if it has been idle too long; a ValueError that says why there is none."""
    r = ROUNDS.get(code) if code else None
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
