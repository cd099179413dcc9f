"""What a page shows of a class round, as plain data (no torch): the projector's record of the whole round
(`RoundRecord`) and a student's record of their own part in it (`SeatRecord`). visuals/classround draws them."""

from dataclasses import dataclass

GUESS, SAMPLE, GREEDY = "guess", "sample", "greedy"
KINDS = (GUESS, SAMPLE, GREEDY)
MODEL, CLASS = "model", "class"  # how the teacher advances: the model's own pick, or the class's most common
HOW = (MODEL, CLASS)
PROJECTOR = "projector"  # the teacher's page draws too ("Draw 100 each"); it is not counted among the students
LEVEL = 0.01  # the chi-square test's level: draws that fit are rejected this often by chance


@dataclass(frozen=True)
class Token:
    id: int
    text: str  # the token's own text (visuals.tokens shows its boundaries)
    p: float  # its probability: processed (what a draw is drawn from) or the model's own (beside a guess)


@dataclass(frozen=True)
class ChiSquare:
    """Pearson's chi-square of observed draws against the counts their probabilities expect."""

    statistic: float
    dof: int  # bins - 1
    p_value: float  # the chance of a statistic this large when the draws do come from the probabilities
    bins: int
    tail: int  # tokens merged into one bin because each alone expects fewer than 5 draws

    @property
    def fits(self) -> bool:
        return self.p_value >= LEVEL


@dataclass(frozen=True)
class DrawRecord:
    """One histogram: every draw from one distribution (a step of the round at one setting)."""

    number: int  # the round's draws are numbered 1, 2, ...: a new one at each step and each change of settings
    step: int
    settings: dict  # temperature, top_k, top_p, min_p
    total: int  # draws counted
    shown: tuple[tuple[Token, int], ...]  # the most probable tokens (processed p) and their draws, most probable first
    other: int  # draws of tokens not shown
    other_p: float  # the processed probability of every token not shown
    kept: int  # tokens a draw can take (processed probability above 0)
    chi: ChiSquare | None  # None until at least two bins expect 5 draws or more
    previous: tuple[int, dict, str] | None = None  # the draw before: (its draws, its settings, its most drawn token)


@dataclass(frozen=True)
class GuessRecord:
    revealed: bool
    guessed: int  # students who guessed at this step
    top1: Token  # the model's most probable token (its own probabilities)
    top1_guessed: int
    # once revealed: each token guessed or among the model's top ten, with the model's probability and its guesses
    counts: tuple[tuple[Token, int], ...] = ()


@dataclass(frozen=True)
class Split:
    """The first greedy step where the class's tokens were not all the same."""

    step: int
    majority: Token  # the token most students wrote there
    others: tuple[tuple[str, Token], ...]  # (student, the token they wrote instead)


@dataclass(frozen=True)
class GreedyRecord:
    length: int  # greedy tokens each student writes
    students: tuple[tuple[str, tuple[int, ...]], ...]  # each student's greedy tokens so far, by student id
    texts: dict  # token id -> text, for every token written
    split: Split | None  # None: every step that two students reached agreed
    compared: int  # steps that at least two students reached
    passes: int  # forward passes behind the class's greedy steps (all of them, their prompts' too)
    shared: int  # of those, passes the scheduler shared with other sessions (packed)
    most_rows: int  # the most sessions in one of those passes
    noise: float | None  # the server's batching noise: how far a shared pass can move a logit (None: not measured)
    # the round is shared by a lecture hall's servers: each student's run and its passes are on their own server
    across_servers: bool = False


@dataclass(frozen=True)
class Appended:
    token: Token  # the token appended, with the processed probability it had
    how: str  # MODEL or CLASS


@dataclass(frozen=True)
class RoundRecord:
    code: str
    kind: str
    step: int  # tokens appended so far
    prompt: str  # what the model reads, as text
    appended: tuple[Appended, ...]
    settings: dict
    present: int  # students here now (their pages heard from)
    left: int  # students counted out: their pages closed or went quiet, or the teacher removed them
    version: int  # changes with everything the projector shows
    shown: int  # changes with what every student's page shows: the step, the kind, the settings, the reveal, the end
    draw: DrawRecord | None
    guesses: GuessRecord
    greedy: GreedyRecord | None
    ended: str | None = None  # why the round ended (None: it runs)
    moved_to: str | None = None  # the round the teacher started next
    done: str | None = None  # the text's end (eos, length): the teacher can no longer advance
    prompt_tokens: tuple[str, ...] = ()  # the prompt's tokens' texts: a shortened prompt is cut between two
    locked: bool = False  # no new seats
    seats: tuple[str, ...] = ()  # the students here, by id (the teacher may remove one)


@dataclass(frozen=True)
class SeatRecord:
    """What one student sees of their own part at this step."""

    student: str
    seed: int
    choices: tuple[Token, ...]  # the model's top ten, in alphabetical order (no probabilities: they would give away
    # the answer)
    guess: Token | None
    drawn: tuple[int, ...]  # this draw's tokens, theirs, in order
    texts: dict  # token id -> text for what they drew
    greedy: tuple[int, ...]  # their greedy tokens so far
    last_serial: int  # the class's draws counted when their last draw was (0: none yet)
    removed: bool = False  # the teacher removed this page from the round
