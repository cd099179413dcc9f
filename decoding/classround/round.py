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

Every change holds the round's one lock, so many students drawing at once each have
their draw counted once; a draw's selection over the vocabulary and a greedy step's passes hold only their student,
so the class's draws and steps run side by side.
"""

import threading
import time
from dataclasses import dataclass, field, replace

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


@dataclass
class Student:
    id: str
    seed: int  # from the student's session, recorded: their draws can be drawn again from it
    generator: torch.Generator
    heard: float = 0.0  # the round's clock when its page was last heard from
    left: bool = False  # its page closed
    removed: bool = False  # the teacher removed it: it cannot join this round again
    allowance: float = DRAW_BURST  # draws it may make now (a token bucket: DRAWS_PER_S, up to DRAW_BURST)
    checked: float = 0.0  # the round's clock when its allowance was last counted
    # their generator draws one token at a time, in order, whatever else the round does meanwhile
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


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
        clock=time.monotonic,
    ):
        if kind not in KINDS:
            raise ValueError(f"a round's kind must be one of {', '.join(KINDS)}, got {kind!r}")
        self.lm, self.prompt, self.code, self._key = lm, prompt, code, key
        self.scheduler, self.greedy_length, self.clock = scheduler, greedy_length, clock
        self.draws_per_s = draws_per_s
        self.run: Run | None = Run(lm, prompt, seed=ROUND_SEED, max_new_tokens=max_steps, scheduler=scheduler, top_n=1)
        self.settings, self.kind = settings, kind
        self.students: dict[str, Student] = {}
        self.locked = False  # no new seats
        self._absent: frozenset[str] = frozenset()  # the students counted out, as last swept
        self.projector = Student(PROJECTOR, ROUND_SEED, _generator(lm, ROUND_SEED))
        self.lock = threading.RLock()
        self.version, self.draws = 0, 0
        self.shown = 0  # changes with what every student's page shows (a student's own draws and guesses aside)
        self.appended: list[Appended] = []
        self.draw: Draw | None = None
        self.previous: Draw | None = None
        self.guesses: Guesses | None = None
        self.greedy: GreedyTogether | None = None
        self.ended: str | None = None
        self.moved_to: str | None = None
        self._final: RoundRecord | None = None  # what the projector shows once the round has ended
        self.last_active = clock()

    def texts(self, ids) -> list[str]:
        return token_texts(self.lm.tokenizer, list(ids))

    def open(self) -> "Round":
        """The prompt's pass (before anyone can join): the first distribution."""
        self.run.prefill()
        with self.lock:
            self._new_step()
        return self

    # --- who ---

    def check(self, key, action: str) -> None:
        """Raise `NotTeacher` unless `key` is this round's teacher key; `action` says what was asked ("advance")."""
        if not isinstance(key, str) or key != self._key:
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
            known = self.students.get(student)
            if known is not None and known.removed:
                raise ValueError(f"the teacher removed this page from round {self.code}: ask the teacher")
            if self.locked and (known is None or known.left):
                raise ValueError(
                    f"round {self.code} is locked: the teacher has closed it to new students; ask the teacher to "
                    "unlock it"
                )
            if known is None:
                known = self.students[student] = Student(student, seed, _generator(self.lm, seed))
            known.left, known.heard = False, self.clock()
            self._sweep()
            self._changed()

    def heard(self, student: str) -> None:
        """`student`'s page is still open (it asked after the round): counted, and counted in again if it had gone
        quiet."""
        with self.lock:
            seat = self.students.get(student)
            if seat is not None and not (seat.left or seat.removed):
                seat.heard = self.clock()
                self._sweep()

    def leave(self, student: str) -> None:
        """`student` left (their tab closed): counted out, and what they guessed and drew with them."""
        with self.lock:
            if student in self.students and not self.students[student].left:
                self.students[student].left = True
                self._sweep()

    @property
    def present(self) -> int:
        with self.lock:
            self._sweep()
            return len(self.students) - len(self._absent)

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
            self._open()
            if settings != self.settings:
                self.settings = settings
                self._new_draw()
                self._changed(everyone=True)

    def set_kind(self, key, kind: str) -> None:
        with self.lock:
            self.check(key, "change")
            self._open()
            if kind not in KINDS:
                raise ValueError(f"a round's kind must be one of {', '.join(KINDS)}, got {kind!r}")
            if kind != self.kind:
                self.kind = kind
                if kind == GREEDY:  # a new start from the context as it is now
                    self.greedy = self._greedy()
                self._changed(everyone=True)

    def lock_joining(self, key, locked: bool) -> None:
        """Lock the round (no new seats: a late student's page is told to ask the teacher), or unlock it."""
        with self.lock:
            self.check(key, "lock")
            self._open()
            if bool(locked) != self.locked:
                self.locked = bool(locked)
                self._changed()

    def remove(self, key, student: str) -> None:
        """The teacher removes a seat: counted out with its guesses and draws, and it cannot join this round again."""
        with self.lock:
            self.check(key, "remove a seat from")
            self._open()
            seat = self.students.get(student)
            if seat is None:
                raise ValueError(f"round {self.code} has no seat {short(student, 20)}: pick one the projector lists")
            seat.removed = True
            self._sweep()
            self._changed(everyone=True)  # its page is told, on its next ask

    def reveal(self, key) -> None:
        with self.lock:
            self.check(key, "reveal the guesses of")
            self._open()
            self._kind_is(GUESS, "Reveal shows the class's guesses")
            self.guesses.revealed = True
            self._changed(everyone=True)

    def advance(self, key, how: str) -> Appended:
        """Append the next token: the model's own pick (the round's settings and seed) or the class's most common
        guess, draw or greedy token; one forward pass on it gives the next step's distribution (the class waits)."""
        with self.lock:
            self.check(key, "advance")
            self._open()
            if how not in HOW:
                raise ValueError(f"a round advances by {' or '.join(HOW)}, got {how!r}")
            self._not_done()
            token = self._class_pick() if how == CLASS else None
            p = float(self.run.preview(self.settings).probs_after[token]) if token is not None else None
            step = self.run.step(self.settings, force_id=token)
            taken = Appended(Token(step.token_id, step.token_text, step.prob_after if p is None else p), how)
            self.appended.append(taken)
            if not self.run.done:
                self._new_step()
            self._changed(everyone=True)
            return taken

    def draw_each(self, key, n: int) -> int:
        """`n` draws for every student here and for the projector; returns the draws made."""
        with self.lock:
            self.check(key, "draw for")
            self._open()
            self._kind_is(SAMPLE, "Draw")
            if not (isinstance(n, int) and 1 <= n <= MAX_EACH):
                raise ValueError(f"draws each must be a whole number in [1, {MAX_EACH}], got {n!r}")
            self._sweep()
            seats = [s for s in self.students.values() if s.id not in self._absent] + [self.projector]
            draw = self.draw
        drawn = []
        for seat in seats:
            with seat.lock:
                drawn.append((seat.id, [draw.pick(seat.generator) for _ in range(n)]))
        with self.lock:
            for student, tokens in drawn:
                for token in tokens:
                    draw.count(student, token)
            self._changed(everyone=True)  # each student's page shows the draws made for them
        return n * len(seats)

    def end(self, key, why: str = "the teacher ended it", moved_to: str | None = None) -> None:
        """End the round: its students see why (and the round the teacher started next); its caches are freed."""
        with self.lock:
            self.check(key, "end")
            self.close(why, moved_to)

    def close(self, why: str, moved_to: str | None = None) -> None:
        """End the round for `why` (the store's expiry calls this without a key)."""
        with self.lock:
            if self.ended is not None:
                return
            self._final = self._record()
            self.ended, self.moved_to = why, moved_to
            self.run = self.greedy = self.guesses = self.draw = self.previous = None
            self._changed(everyone=True)

    # --- a student ---

    def guess(self, student: str, token: int, step: int | None = None) -> Token:
        """`student`'s guess at the next token (`step`: the step their page showed, when it says)."""
        with self.lock:
            self._open()
            self._here(student)
            self._kind_is(GUESS, "Guessing")
            if step is not None and step != len(self.appended):
                raise ValueError(
                    f"your guess was for step {step + 1}, and the teacher has moved on to step "
                    f"{len(self.appended) + 1}: guess again"
                )
            taken = self.guesses.guess(student, token)
            self._changed()
            return taken

    def draw_one(self, student: str) -> tuple[Token, int]:
        """One draw with the student's generator, counted in the draw it was drawn from: the token, and the draws
        counted with it. The round's lock is let go while it draws, so the class's draws run side by side."""
        with self.lock:
            self._open()
            seat = self._here(student)
            self._kind_is(SAMPLE, "Draw")
            self._allow_draw(seat)
            draw = self.draw
        with seat.lock:
            token = draw.pick(seat.generator)
        with self.lock:
            total = draw.count(student, token)
            self._changed()
            return Token(token, draw.names[token], 0.0), total

    def greedy_step(self, student: str, n: int = 1) -> int:
        """Up to `n` greedy steps of the student's own run, through the scheduler: the round's lock is let go while
        they wait, so the class's steps share its passes. Returns the steps taken."""
        with self.lock:
            self._open()
            self._here(student)
            self._kind_is(GREEDY, "Greedy steps")
            together = self.greedy
            seat = together.seat(student)
        taken = together.step(seat, n)
        with self.lock:
            if together is self.greedy:
                self._changed()
        return taken

    # --- what the pages read ---

    def record(self) -> RoundRecord:
        with self.lock:
            self._sweep()
            if self._final is not None:
                return replace(
                    self._final, ended=self.ended, moved_to=self.moved_to, version=self.version, shown=self.shown
                )
            return self._record()

    def seat(self, student: str) -> SeatRecord:
        """What `student` sees of their own part (an ended round: their seed alone)."""
        with self.lock:
            known = self.students.get(student)
            seed = known.seed if known is not None else 0
            removed = known is not None and known.removed
            if self.ended is not None or removed:
                return SeatRecord(student, seed, (), None, (), {}, (), 0, removed=removed)
            guessed = self.guesses.by_student.get(student) if self.guesses else None
            drawn = tuple(self.draw.by_student.get(student, ())) if self.draw else ()
            names = {t: self.draw.names[t] for t in drawn}
            greedy = self.greedy.sequences().get(student, ()) if self.greedy else ()
            return SeatRecord(
                student=student,
                seed=seed,
                choices=self.guesses.choices() if self.guesses else (),
                guess=self.guesses.token(guessed) if guessed is not None else None,
                drawn=drawn,
                texts=names,
                greedy=greedy,
                last_serial=self.draw.last_total.get(student, 0) if self.draw else 0,
            )

    def numbers(self, key) -> dict:
        """The round as numbers (JSON), for the teacher's key alone (they hold the answers before the reveal): every
        draw's count by token and the probabilities they were drawn from, for a check outside the page
        (bench/classroom_load.py)."""
        with self.lock:
            self.check(key, "read the numbers of")
            self._sweep()
            absent = self._absent
            out = {"code": self.code, "kind": self.kind, "step": len(self.appended), "present": self.present}
            out |= {"left": len(absent), "locked": self.locked}
            if self.draw is not None:
                d = self.draw
                chi = d.chi(absent)
                counts = d.counted(absent)
                out["draw"] = {
                    "number": d.number,
                    "total": sum(counts.values()),
                    "made": d.total,
                    "counts": {str(t): n for t, n in counts.items()},
                    "probs": [[t, p] for t, p in d.probs],
                    "kept": d.kept,
                    "chi": None if chi is None else {"statistic": chi.statistic, "dof": chi.dof, "p": chi.p_value},
                }
            if self.guesses is not None:
                g = self.guesses.record(absent)
                out["guesses"] = {"guessed": g.guessed, "top1": g.top1.id, "top1_guessed": g.top1_guessed}
                out["guesses"]["revealed"] = g.revealed
            if self.greedy is not None:
                g = self.greedy.record(self.texts, None, absent)
                split = None if g.split is None else {"step": g.split.step, "students": [s for s, _ in g.split.others]}
                out["greedy"] = {"students": len(g.students), "compared": g.compared, "split": split}
                out["greedy"] |= {"passes": g.passes, "shared": g.shared, "most_rows": g.most_rows}
            return out

    def idle_s(self) -> float:
        """Seconds since anyone last did anything in the round (a page reading it does not count)."""
        return self.clock() - self.last_active

    def held_tokens(self) -> list[int]:
        """Each KV cache the round holds, as the tokens it holds at its longest: its own run's, and each student's
        greedy run (what the server's memory cap counts)."""
        with self.lock:
            if self.run is None:
                return []
            own = [len(self.prompt.ids) + self.run.trace.max_new_tokens]
            greedy = self.greedy
            extra = [len(greedy.prompt.ids) + greedy.length] * greedy.runs() if greedy is not None else []
            return own + extra

    # --- inside ---

    def _record(self) -> RoundRecord:
        noise = self.scheduler.noise.value if self.scheduler is not None and self.scheduler.noise else None
        done = self.run.trace.stop_reason if self.run is not None else None
        absent = self._absent
        return RoundRecord(
            code=self.code,
            kind=self.kind,
            step=len(self.appended),
            prompt=self.prompt.text,
            appended=tuple(self.appended),
            settings={name: getattr(self.settings, name) for name in ("temperature", "top_k", "top_p", "min_p")},
            present=len(self.students) - len(absent),
            left=len(absent),
            version=self.version,
            shown=self.shown,
            draw=self.draw.record(self.previous, absent) if self.draw is not None else None,
            guesses=self.guesses.record(absent) if self.guesses is not None else None,
            greedy=self.greedy.record(self.texts, noise, absent) if self.greedy is not None else None,
            ended=self.ended,
            moved_to=self.moved_to,
            done=done,
            prompt_tokens=tuple(self.prompt.tokens),
            locked=self.locked,
            seats=tuple(sorted(s for s in self.students if s not in absent)),
        )

    def _new_step(self) -> None:
        """After a token was appended (or the prompt read): new guesses, a new draw, a new greedy start."""
        processed = self.run.preview(self.settings)
        self.guesses = Guesses(processed.probs_before, self.texts)
        self.previous = None
        self.draw = None
        self._new_draw()
        self.greedy = self._greedy()

    def _new_draw(self) -> None:
        self.previous = self.draw if self.draw is not None and self.draw.total else self.previous
        self.draws += 1
        processed = self.run.preview(self.settings)
        self.draw = Draw(self.draws, len(self.appended), self.settings, processed, self.texts)

    def _greedy(self) -> GreedyTogether:
        ids = list(self.run.ids)
        text = self.prompt.text + self.lm.tokenizer.decode(self.run.generated)
        prompt = Prompt(text, ids, list(self.prompt.tokens) + [a.token.text for a in self.appended])
        return GreedyTogether(self.lm, prompt, self.greedy_length, self.scheduler)

    def _class_pick(self) -> int:
        """The class's most common guess, draw or first greedy token, among the seats here."""
        self._sweep()
        absent = self._absent
        if self.kind == GUESS:
            pick, what = self.guesses.most_guessed(absent), "guesses"
        elif self.kind == SAMPLE:
            pick, what = self.draw.most_drawn(absent), "draws"
        else:
            firsts = [seq[0] for seq in self.greedy.sequences(absent).values() if seq]
            pick, what = (max(set(firsts), key=lambda t: (firsts.count(t), -t)) if firsts else None), "greedy steps"
        if pick is None:
            raise ValueError(f"the class has no {what} at this step yet: wait for them, or append the model's pick")
        return pick

    def _open(self) -> None:
        if self.ended is not None:
            where = f": join round {self.moved_to}" if self.moved_to else ""
            raise ValueError(f"round {self.code} has ended ({self.ended}){where}")

    def _not_done(self) -> None:
        if self.run.done:
            raise ValueError(
                f"round {self.code}'s text has ended ({self.run.trace.stop_reason}): start a new round to go on"
            )

    def _here(self, student: str) -> Student:
        """The student's seat, heard from now (a click is a sign of life), or why it has none."""
        seat = self.students.get(student)
        if seat is not None and seat.removed:
            raise ValueError(f"the teacher removed this page from round {self.code}: ask the teacher")
        if seat is None or seat.left:
            raise ValueError(f"this page is not in round {self.code}: open the round's link, or type its code")
        seat.heard = self.clock()
        self._sweep()
        return seat

    def _live(self, seat: Student, now: float) -> bool:
        return not (seat.left or seat.removed) and now - seat.heard <= GONE_S

    def _sweep(self) -> None:
        """Recount the seats here (the caller holds the lock); the projector's view changes when they change."""
        now = self.clock()
        absent = frozenset(s.id for s in self.students.values() if not self._live(s, now))
        if absent != self._absent:
            self._absent = absent
            self.version += 1  # not an action: a round whose seats go quiet still ends when idle

    def _allow_draw(self, seat: Student) -> None:
        """A draw within the seat's rate (a token bucket), or a ValueError that says why not; nothing is drawn."""
        now = self.clock()
        seat.allowance = min(DRAW_BURST, seat.allowance + (now - seat.checked) * self.draws_per_s)
        seat.checked = now
        if seat.allowance < 1 - 1e-9:  # a press exactly on the rate is within it
            raise ValueError(
                f"at most {self.draws_per_s:g} draws a second for each page, as fast as a person presses: this one was "
                "not drawn; press again in a moment"
            )
        seat.allowance -= 1

    def _kind_is(self, kind: str, what: str) -> None:
        if self.kind != kind:
            raise ValueError(f"{what} is for a {kind} round; round {self.code} is a {self.kind} round now")
        if self.run is not None and self.run.done:
            self._not_done()

    def _changed(self, everyone: bool = False) -> None:
        """Something the projector shows changed; `everyone`: something every student's page shows too (the step, the
        kind, the settings, the reveal, the end), which their pages ask after (`shown`)."""
        self.version += 1
        self.shown += everyone
        self.last_active = self.clock()


def _generator(lm: LoadedModel, seed: int) -> torch.Generator:
    return torch.Generator(device=lm.device).manual_seed(int(seed))
