"""A class round: one context the whole class reads (the teacher's prompt and the tokens appended so far), its
settings, its kind (records.KINDS), who is here, and what they guessed, drew and wrote.

The round's logits are computed once per step, by its own `Run` (one forward pass for the whole class); the guesses,
the draws and the chi-square read them. Only greedy together runs each student's own steps, on purpose: through the
scheduler, so the class's passes are batched together.

Who may change it: the teacher, whose key the round checks on every change (`check`); a student joins, guesses, draws
and steps greedy as themself.

Who counts: a seat is counted while its page is heard from (`heard`: its page asks after the round every few seconds,
and every click is heard too) and until it closes (`leave`) or the teacher removes it (`remove`). A seat not heard from
for `GONE_S` is counted out with everything it guessed, drew and stepped: the class's counts and its pick read the
seats here alone, so clients that joined, guessed and went away weigh nothing. The teacher can lock the round once
the class is in (no new seats). A seat draws at most `DRAWS_PER_S` a second, as fast as a person presses.

Where it lives: in a `RoundState` (decoding/classround/state.py), this process's memory or Redis, chosen once when
the server starts. Every change is one atomic operation of the state, so many students drawing at once, on one
replica or several, each have their draw counted once; a draw's selection over the vocabulary and a greedy step's
passes hold only their student, so the class's draws and steps run side by side. A replica that did not compute a
step reads what the model gave (the processed logits, the probabilities) from the state; the round's own `Run` and
each student's greedy run (their KV caches) stay on the replica that made them: a replica the teacher moves to reads
the round's context again in one pass, and a student's greedy run is on their own replica.
"""

import hashlib
import hmac
import threading
from dataclasses import replace

import torch

from decoding.classround.draws import Draw
from decoding.classround.greedy import LENGTH, GreedyTogether
from decoding.classround.guesses import Guesses
from decoding.classround.records import (
    CLASS,
    GREEDY,
    GUESS,
    HOW,
    KINDS,
    PROJECTOR,
    SAMPLE,
    Appended,
    RoundRecord,
    SeatRecord,
    Token,
)
from decoding.classround.state import LOCKED, REMOVED, Fields, LocalState, RoundState, SeatState, Setup
from decoding.loop import Run
from decoding.models import LoadedModel
from decoding.pipeline import SamplerSettings
from decoding.prompts import Prompt, token_texts
from decoding.values import short

MAX_STEPS = 32  # tokens the teacher can append to the prompt
ROUND_SEED = 0  # the round's own draws (the model's pick) and the projector's
MAX_EACH = 1000  # "draw N each": the most draws a seat gets in one press
GONE_S = 8.0  # a seat not heard from this long is counted out (its page asks every 3 s; a closed page leaves at once)
DRAWS_PER_S = 3.0  # a seat's draws: as fast as a person presses, in bursts of up to DRAW_BURST
DRAW_BURST = 3


class NotTeacher(ValueError):
    """A change asked for without the round's teacher key."""


class Round:
    def __init__(
        self,
        lm: LoadedModel,
        prompt: Prompt,
        settings: SamplerSettings,
        kind: str,
        *,
        code: str,
        key: str,
        scheduler=None,
        max_steps: int = MAX_STEPS,
        greedy_length: int = LENGTH,
        draws_per_s: float = DRAWS_PER_S,
        clock=None,
        state: RoundState | None = None,
    ):
        """A new round in `state` (by default this process's memory); `open()` reads its prompt."""
        if kind not in KINDS:
            raise ValueError(f"a round's kind must be one of {', '.join(KINDS)}, got {kind!r}")
        state = state if state is not None else LocalState()
        ids, tokens = tuple(prompt.ids), tuple(prompt.tokens)
        setup = Setup(code, _hashed(key), prompt.text, ids, tokens, max_steps, greedy_length, draws_per_s)
        clock = clock or state.clock
        state.create(setup, Fields(kind, settings, last_active=clock()))
        self._attach(lm, state, scheduler, clock)
        self.run = Run(lm, prompt, seed=ROUND_SEED, max_new_tokens=max_steps, scheduler=scheduler, top_n=1)

    @classmethod
    def attach(cls, lm: LoadedModel, state: RoundState, scheduler=None, clock=None) -> "Round":
        """A round another replica started, as this replica sees it (its `Run` made when this replica needs one)."""
        r = cls.__new__(cls)
        r._attach(lm, state, scheduler, clock or state.clock)
        return r

    def _attach(self, lm, state: RoundState, scheduler, clock) -> None:
        setup = state.setup()
        self.lm, self.state, self.scheduler, self.clock = lm, state, scheduler, clock
        self.code, self._key_hash = setup.code, setup.key_hash
        self.prompt = Prompt(setup.prompt_text, list(setup.prompt_ids), list(setup.prompt_tokens))
        self.max_steps, self.greedy_length, self.draws_per_s = setup.max_steps, setup.greedy_length, setup.draws_per_s
        self.lock = threading.RLock()  # this replica's view of the round (its caches below)
        self.run: Run | None = None  # the round's own run, on the replica that steps it
        self._draws: dict[int, Draw] = {}  # the current draw and the one beside it, by number
        self._guesses: Guesses | None = None
        self._greedy: GreedyTogether | None = None
        self._seats: dict[str, SeatState] = {}
        self._absent: frozenset[str] = frozenset()  # the students counted out, as last swept
        self._final: RoundRecord | None = None  # what the projector shows once the round has ended

    def texts(self, ids) -> list[str]:
        return token_texts(self.lm.tokenizer, list(ids))

    def open(self) -> "Round":
        """The prompt's pass (before anyone can join): the first distribution."""
        self.run.prefill()
        with self.lock:
            f = self.state.fields()
            self.state.change(self.clock(), **self._new_step(self.run, f.settings, f))
        return self

    # --- the state, as this replica reads it ---

    @property
    def kind(self) -> str:
        return self.state.fields().kind

    @property
    def settings(self) -> SamplerSettings:
        return self.state.fields().settings

    @property
    def locked(self) -> bool:
        return self.state.fields().locked

    @property
    def ended(self) -> str | None:
        return self.state.fields().ended

    @property
    def moved_to(self) -> str | None:
        return self.state.fields().moved_to

    @property
    def version(self) -> int:
        return self.state.fields().version

    @property
    def shown(self) -> int:
        return self.state.fields().shown

    @property
    def last_active(self) -> float:
        return self.state.fields().last_active

    @last_active.setter
    def last_active(self, when: float) -> None:
        self.state.touch(when)

    @property
    def draw(self) -> Draw | None:
        with self.lock:
            f = self.state.fields()
            return self._draw_of(f.draws) if f.ended is None else None

    @property
    def greedy(self) -> GreedyTogether | None:
        with self.lock:
            f = self.state.fields()
            return self._greedy_of(f) if f.ended is None else None

    # --- who ---

    def check(self, key, action: str) -> None:
        """Raise `NotTeacher` unless `key` is this round's teacher key; `action` says what was asked ("advance")."""
        if not isinstance(key, str) or not hmac.compare_digest(_hashed(key), self._key_hash):
            # what the request carried, not who sent it: a teacher's own page replayed without its key lands here too
            sent = "no teacher key" if not key else "a teacher key that is not this round's"
            raise NotTeacher(
                f"only the teacher who started round {self.code} can {action} it, from the page that started it: "
                f"this request carried {sent}"
            )

    def join(self, student: str, seed: int) -> None:
        """`student` is here (again, if their page had gone quiet: their draws and guesses count again)."""
        with self.lock:
            self._open()
            joined = self.state.join(student, seed, self.clock(), DRAW_BURST)
            if joined == REMOVED:
                raise ValueError(f"the teacher removed this page from round {self.code}: ask the teacher")
            if joined == LOCKED:
                raise ValueError(
                    f"round {self.code} is locked: the teacher has closed it to new students; ask the teacher to "
                    "unlock it"
                )
            self._sweep()

    def heard(self, student: str) -> None:
        """`student`'s page is still open (it asked after the round): counted, and counted in again if it had gone
        quiet."""
        with self.lock:
            self.state.heard(student, self.clock())
            self._sweep()

    def leave(self, student: str) -> None:
        """`student` left (their tab closed): counted out, and what they guessed and drew with them."""
        with self.lock:
            if self.state.leave(student):
                self._sweep()

    @property
    def present(self) -> int:
        with self.lock:
            self._sweep()
            return len(self._seats) - len(self._absent)

    def sweep(self) -> None:
        """Count out the seats not heard from for GONE_S (the projector's page asks after the round every quarter
        second, which calls this: a seat that went quiet is counted out on the projector within GONE_S and that)."""
        with self.lock:
            self._sweep()

    # --- the teacher ---

    def set_settings(self, key, settings: SamplerSettings) -> None:
        """New settings: a new draw (a new histogram), the last one kept beside it."""
        with self.lock:
            self.check(key, "change")
            f = self._open()
            if settings != f.settings:
                changes = self._new_draw(self._own_run(f), settings, f)
                self.state.change(self.clock(), everyone=True, settings=settings, **changes)
                self._prune()

    def set_kind(self, key, kind: str) -> None:
        with self.lock:
            self.check(key, "change")
            f = self._open()
            if kind not in KINDS:
                raise ValueError(f"a round's kind must be one of {', '.join(KINDS)}, got {kind!r}")
            if kind != f.kind:
                # greedy: a new start from the context as it is now
                again = {"greedy": f.greedy + 1} if kind == GREEDY else {}
                self.state.change(self.clock(), everyone=True, kind=kind, **again)

    def lock_joining(self, key, locked: bool) -> None:
        """Lock the round (no new seats: a late student's page is told to ask the teacher), or unlock it."""
        with self.lock:
            self.check(key, "lock")
            f = self._open()
            if bool(locked) != f.locked:
                self.state.change(self.clock(), locked=bool(locked))

    def remove(self, key, student: str) -> None:
        """The teacher removes a seat: counted out with its guesses and draws, and it cannot join this round again."""
        with self.lock:
            self.check(key, "remove a seat from")
            self._open()
            if not self.state.remove(student):
                raise ValueError(f"round {self.code} has no seat {short(student, 20)}: pick one the projector lists")
            self._sweep()
            self.state.change(self.clock(), everyone=True)  # its page is told, on its next ask

    def reveal(self, key) -> None:
        with self.lock:
            self.check(key, "reveal the guesses of")
            f = self._open()
            self._kind_is(f, GUESS, "Reveal shows the class's guesses")
            self.state.change(self.clock(), everyone=True, revealed=True)

    def advance(self, key, how: str) -> Appended:
        """Append the next token: the model's own pick (the round's settings and seed) or the class's most common
        guess, draw or greedy token; one forward pass on it gives the next step's distribution (the class waits)."""
        with self.lock:
            self.check(key, "advance")
            f = self._open()
            if how not in HOW:
                raise ValueError(f"a round advances by {' or '.join(HOW)}, got {how!r}")
            self._not_done(f)
            run = self._own_run(f)
            token = self._class_pick(f) if how == CLASS else None
            p = float(run.preview(f.settings).probs_after[token]) if token is not None else None
            step = run.step(f.settings, force_id=token)
            taken = Appended(Token(step.token_id, step.token_text, step.prob_after if p is None else p), how)
            changes = dict(appended=f.appended + (taken,), done=run.trace.stop_reason if run.done else None)
            if not run.done:
                changes |= self._new_step(run, f.settings, replace(f, appended=changes["appended"]))
            self.state.change(self.clock(), everyone=True, **changes)
            self._prune()
            return taken

    def draw_each(self, key, n: int) -> int:
        """`n` draws for every student here and for the projector; returns the draws made."""
        with self.lock:
            self.check(key, "draw for")
            f = self._open()
            self._kind_is(f, SAMPLE, "Draw")
            if not (isinstance(n, int) and 1 <= n <= MAX_EACH):
                raise ValueError(f"draws each must be a whole number in [1, {MAX_EACH}], got {n!r}")
            self._sweep()
            seeds = {s: seat.seed for s, seat in self._seats.items() if s not in self._absent}
            seeds[PROJECTOR] = ROUND_SEED
            draw = self._draw_of(f.draws)
        drawn = []
        for student, seed in seeds.items():
            with self.state.generator(student, lambda seed=seed: _generator(self.lm, seed)) as generator:
                drawn.append((student, [draw.pick(generator) for _ in range(n)]))
        self.state.count(draw.number, drawn, self.clock())
        self.state.change(self.clock(), everyone=True)  # each student's page shows the draws made for them
        return n * len(seeds)

    def end(self, key, why: str = "the teacher ended it", moved_to: str | None = None) -> None:
        """End the round: its students see why (and the round the teacher started next); its caches are freed."""
        with self.lock:
            self.check(key, "end")
            self.close(why, moved_to)

    def close(self, why: str, moved_to: str | None = None) -> None:
        """End the round for `why` (the store's expiry calls this without a key)."""
        with self.lock:
            f = self.state.fields()
            if f.ended is not None:
                return
            self._sweep()
            final = self._record(self.state.fields())
            if self.state.close(self.clock(), why, moved_to):
                self._final = final
            self._let_go()

    # --- a student ---

    def guess(self, student: str, token: int, step: int | None = None) -> Token:
        """`student`'s guess at the next token (`step`: the step their page showed, when it says)."""
        with self.lock:
            f = self._open()
            self._here(student)
            self._kind_is(f, GUESS, "Guessing")
            if step is not None and step != f.step:
                raise ValueError(
                    f"your guess was for step {step + 1}, and the teacher has moved on to step {f.step + 1}: guess "
                    "again"
                )
            return self._guesses_of(f).guess(student, token, f.revealed, self.clock())

    def draw_one(self, student: str) -> tuple[Token, int]:
        """One draw with the student's generator, counted in the draw it was drawn from: the token, and the draws
        counted with it. The round's lock is let go while it draws, so the class's draws run side by side."""
        with self.lock:
            f = self._open()
            seat = self._here(student)
            self._kind_is(f, SAMPLE, "Draw")
            if not self.state.allow(student, self.clock(), self.draws_per_s, DRAW_BURST):
                raise ValueError(
                    f"at most {self.draws_per_s:g} draws a second for each page, as fast as a person presses: this "
                    "one was not drawn; press again in a moment"
                )
            draw = self._draw_of(f.draws)
        with self.state.generator(student, lambda: _generator(self.lm, seat.seed)) as generator:
            token = draw.pick(generator)
        total = self.state.count(draw.number, [(student, [token])], self.clock())
        return Token(token, draw.name(token), 0.0), total

    def greedy_step(self, student: str, n: int = 1) -> int:
        """Up to `n` greedy steps of the student's own run, through the scheduler: the round's lock is let go while
        they wait, so the class's steps share its passes. Returns the steps taken."""
        with self.lock:
            f = self._open()
            self._here(student)
            self._kind_is(f, GREEDY, "Greedy steps")
            together = self._greedy_of(f)
            seat = together.seat(student)
        return together.step(seat, student, n)

    # --- what the pages read ---

    def record(self) -> RoundRecord:
        with self.lock:
            self._sweep()
            f = self.state.fields()
            if f.ended is not None:
                if self._final is None:  # ended on another replica: what it showed is still in the state
                    self._final = self._record(f)
                    self._let_go()
                return replace(self._final, ended=f.ended, moved_to=f.moved_to, version=f.version, shown=f.shown)
            return self._record(f)

    def seat(self, student: str) -> SeatRecord:
        """What `student` sees of their own part (an ended round: their seed alone)."""
        with self.lock:
            f = self.state.fields()
            known = self.state.seats().get(student)
            seed = known.seed if known is not None else 0
            removed = known is not None and known.removed
            if f.ended is not None or removed:
                return SeatRecord(student, seed, (), None, (), {}, (), 0, removed=removed)
            guesses = self._guesses_of(f)
            guessed = guesses.by_student().get(student)
            draw = self._draw_of(f.draws)
            tally = draw.tally()
            drawn = tuple(tally.by_student.get(student, ()))
            return SeatRecord(
                student=student,
                seed=seed,
                choices=guesses.choices(),
                guess=guesses.token(guessed) if guessed is not None else None,
                drawn=drawn,
                texts={t: draw.name(t) for t in drawn},
                greedy=self._greedy_of(f).sequences().get(student, ()),
                last_serial=tally.last.get(student, 0),
            )

    def numbers(self, key) -> dict:
        """The round as numbers (JSON), for the teacher's key alone (they hold the answers before the reveal): every
        draw's count by token and the probabilities they were drawn from, for a check outside the page
        (bench/classroom_load.py)."""
        with self.lock:
            self.check(key, "read the numbers of")
            self._sweep()
            f, absent = self.state.fields(), self._absent
            out = {"code": self.code, "kind": f.kind, "step": f.step, "present": len(self._seats) - len(absent)}
            out |= {"left": len(absent), "locked": f.locked}
            if f.ended is not None:
                return out
            d = self._draw_of(f.draws)
            tally = d.tally()
            chi = d.chi(absent, tally)
            counts = d.counted(absent, tally)
            out["draw"] = {
                "number": d.number,
                "total": sum(counts.values()),
                "made": tally.total,
                "counts": {str(t): n for t, n in counts.items()},
                "probs": [[t, p] for t, p in d.probs],
                "kept": d.kept,
                "chi": None if chi is None else {"statistic": chi.statistic, "dof": chi.dof, "p": chi.p_value},
            }
            g = self._guesses_of(f).record(absent, f.revealed)
            out["guesses"] = {"guessed": g.guessed, "top1": g.top1.id, "top1_guessed": g.top1_guessed}
            out["guesses"]["revealed"] = g.revealed
            g = self._greedy_of(f).record(self.texts, None, absent)
            split = None if g.split is None else {"step": g.split.step, "students": [s for s, _ in g.split.others]}
            out["greedy"] = {"students": len(g.students), "compared": g.compared, "split": split}
            out["greedy"] |= {"passes": g.passes, "shared": g.shared, "most_rows": g.most_rows}
            return out

    def idle_s(self) -> float:
        """Seconds since anyone last did anything in the round (a page reading it does not count)."""
        return self.clock() - self.state.fields().last_active

    def held_tokens(self) -> list[int]:
        """Each KV cache the round holds on this replica, as the tokens it holds at its longest: its own run's (where
        the teacher steps it), and each student's greedy run here (what this server's memory cap counts)."""
        with self.lock:
            own = [len(self.prompt.ids) + self.run.trace.max_new_tokens] if self.run is not None else []
            greedy = self._greedy
            extra = [len(greedy.prompt.ids) + greedy.length] * greedy.runs() if greedy is not None else []
            return own + extra

    # --- inside ---

    def _record(self, f: Fields) -> RoundRecord:
        noise = self.scheduler.noise.value if self.scheduler is not None and self.scheduler.noise else None
        absent = self._absent
        draw = self._draw_of(f.draws)
        previous = self._draw_of(f.previous) if f.previous else None
        return RoundRecord(
            code=self.code,
            kind=f.kind,
            step=f.step,
            prompt=self.prompt.text,
            appended=f.appended,
            settings={name: getattr(f.settings, name) for name in ("temperature", "top_k", "top_p", "min_p")},
            present=len(self._seats) - len(absent),
            left=len(absent),
            version=f.version,
            shown=f.shown,
            draw=draw.record(previous, absent),
            guesses=self._guesses_of(f).record(absent, f.revealed),
            greedy=self._greedy_of(f).record(self.texts, noise, absent),
            ended=f.ended,
            moved_to=f.moved_to,
            done=f.done,
            prompt_tokens=tuple(self.prompt.tokens),
            locked=f.locked,
            seats=tuple(sorted(s for s in self._seats if s not in absent)),
        )

    def _new_step(self, run: Run, settings: SamplerSettings, f: Fields) -> dict:
        """After a token was appended (or the prompt read): the model's probabilities for the guesses, a new draw, a
        new greedy start; what the model gave goes to the state first, then the fields that name it (returned)."""
        self.state.put_computed(f"guess:{f.step}", run.preview(settings).probs_before)
        return dict(self._new_draw(run, settings, f, keep=False), greedy=f.greedy + 1, revealed=False)

    def _new_draw(self, run: Run, settings: SamplerSettings, f: Fields, keep: bool = True) -> dict:
        """A new draw at `settings`; with `keep`, the one before is kept beside it if anyone drew from it."""
        kept = f.previous if keep else 0
        if keep and f.draws and self._draw_of(f.draws).tally().total:
            kept = f.draws
        number = f.draws + 1
        self.state.put_computed(f"draw:{number}", run.preview(settings).final, step=f.step, settings=settings)
        return dict(draws=number, previous=kept)

    def _prune(self) -> None:
        """What the model computed that no page reads any more: the draws before the last two and the one kept beside
        them, the steps before the last (a page that read the fields just before a change still finds its own)."""
        f = self.state.fields()
        draws = {f"draw:{n}" for n in (f.draws, f.draws - 1, f.previous) if n}
        self.state.prune(draws | {f"guess:{n}" for n in (f.step, f.step - 1) if n >= 0})

    def _own_run(self, f: Fields) -> Run:
        """The round's own run at its context: this replica's, or read again in one pass (the teacher's page moved
        here from a replica that went away)."""
        ids = list(self.prompt.ids) + [a.token.id for a in f.appended]
        if self.run is None or self.run.ids != ids:
            run = Run(
                self.lm, self.prompt, seed=ROUND_SEED, max_new_tokens=self.max_steps, scheduler=self.scheduler, top_n=1
            )
            run.prefill()
            for a in f.appended:
                run.step(f.settings, force_id=a.token.id)
            self.run = run
        return self.run

    def _draw_of(self, number: int) -> Draw:
        """Draw `number` as this replica sees it (its processed logits read from the state once)."""
        if number not in self._draws:
            final, info = self.state.computed(f"draw:{number}")
            drawn = Draw(number, info["step"], info["settings"], final.to(self.lm.device), self.texts, self.state)
            self._draws = {n: d for n, d in self._draws.items() if n >= number - 1} | {number: drawn}
        return self._draws[number]

    def _guesses_of(self, f: Fields) -> Guesses:
        if self._guesses is None or self._guesses.step != f.step:
            probs, _ = self.state.computed(f"guess:{f.step}")
            self._guesses = Guesses(probs, self.texts, self.state, f.step)
        return self._guesses

    def _greedy_of(self, f: Fields) -> GreedyTogether:
        """The class's greedy runs from the context as it was at the current greedy start (this replica's runs)."""
        if self._greedy is None or self._greedy.start != f.greedy:
            ids = list(self.prompt.ids) + [a.token.id for a in f.appended]
            text = self.prompt.text + self.lm.tokenizer.decode(ids[len(self.prompt.ids) :])
            prompt = Prompt(text, ids, list(self.prompt.tokens) + [a.token.text for a in f.appended])
            self._greedy = GreedyTogether(
                self.lm, prompt, self.greedy_length, self.scheduler, self.state, f.greedy, self.clock
            )
        return self._greedy

    def _let_go(self) -> None:
        """An ended round's caches on this replica: its run, the students' greedy runs, the draws' logits."""
        self.run = self._greedy = self._guesses = None
        self._draws = {}

    def _class_pick(self, f: Fields) -> int:
        """The class's most common guess, draw or first greedy token, among the seats here."""
        self._sweep()
        absent = self._absent
        if f.kind == GUESS:
            pick, what = self._guesses_of(f).most_guessed(absent), "guesses"
        elif f.kind == SAMPLE:
            pick, what = self._draw_of(f.draws).most_drawn(absent), "draws"
        else:
            firsts = [seq[0] for seq in self._greedy_of(f).sequences(absent).values() if seq]
            pick, what = (max(set(firsts), key=lambda t: (firsts.count(t), -t)) if firsts else None), "greedy steps"
        if pick is None:
            raise ValueError(f"the class has no {what} at this step yet: wait for them, or append the model's pick")
        return pick

    def _open(self) -> Fields:
        f = self.state.fields()
        if f.ended is not None:
            where = f": join round {f.moved_to}" if f.moved_to else ""
            raise ValueError(f"round {self.code} has ended ({f.ended}){where}")
        return f

    def _not_done(self, f: Fields) -> None:
        if f.done is not None:
            raise ValueError(f"round {self.code}'s text has ended ({f.done}): start a new round to go on")

    def _here(self, student: str) -> SeatState:
        """The student's seat, heard from now (a click is a sign of life), or why it has none."""
        seat = self.state.seats().get(student)
        if seat is not None and seat.removed:
            raise ValueError(f"the teacher removed this page from round {self.code}: ask the teacher")
        if seat is None or seat.left:
            raise ValueError(f"this page is not in round {self.code}: open the round's link, or type its code")
        self.state.heard(student, self.clock())
        self._sweep()
        return seat

    def _sweep(self) -> None:
        """Recount the seats here; the projector's view changes when they change."""
        now = self.clock()
        self._seats = self.state.seats()
        self._absent = frozenset(s for s, seat in self._seats.items() if not _live(seat, now))
        self.state.swept(self._absent)  # not an action: a round whose seats go quiet still ends when idle

    def _kind_is(self, f: Fields, kind: str, what: str) -> None:
        if f.kind != kind:
            raise ValueError(f"{what} is for a {kind} round; round {self.code} is a {f.kind} round now")
        self._not_done(f)


def _live(seat: SeatState, now: float) -> bool:
    return not (seat.left or seat.removed) and now - seat.heard <= GONE_S


def _hashed(key) -> str:
    """The teacher key as the state keeps it: its hash (a state read by anyone cannot act as the teacher)."""
    return hashlib.sha256(str(key).encode()).hexdigest() if isinstance(key, str) else ""


def _generator(lm: LoadedModel, seed: int) -> torch.Generator:
    return torch.Generator(device=lm.device).manual_seed(int(seed))
