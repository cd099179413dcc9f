"""The beam tab's handlers.

A search in progress is a `beam_steps` generator: it holds the KV cache of every beam, so it never goes into
`gr.State`. The page keeps a short session id; `SEARCHES` maps it to the search in the one session store
(ui.sessions), which counts its beams' KV cache under the server's one cap. Handlers call decoding, then visuals,
and return a `BeamView`, whose fields name the outputs.
"""

import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

from decoding import values
from decoding.beams import scoring
from decoding.beams import search as beams
from decoding.prompts import Prompt, encode_prompt
from decoding.watch import Cancelled
from ui.context import CHAT, AppConfig, get_model, model_turn
from ui.events import PROGRESS, CancelFlags
from ui.sessions import STORE, beam_search_bytes
from visuals.beams.search import beam_tree_figure, beams_markdown, compare_figure, compare_markdown
from visuals.theme import empty_figure

EARLY = {"false": False, "true": True, "never": "never"}
STOPS = CancelFlags()  # the Stop button beside Run to end: read between two steps
MAX_BEAMS_UI, MAX_NEW_UI = 8, 64
PENALTY_RANGE = (-2, 3)  # the slider's; the engine takes [-5, 5], but beyond 3 every answer runs to the limit


STOP_WORDS = {
    "max_new_tokens": "it reached max new tokens",
    "all_finished": "early stopping = True and the finished set holds num_beams hypotheses",
    "cannot_improve": "no live beam can beat the worst finished hypothesis any more",
    "no_continuation": "every candidate ended",
}
TREE_BLANK = "Press Step: the prompt is read once per beam, then every beam grows by one token per step"
COMPARE_BLANK = "When the search ends, greedy's sequence is scored beside it"


class Settings(NamedTuple):
    """A search's settings, checked; named as beam_steps' arguments, and the tab's knobs carry the same names."""

    num_beams: int
    length_penalty: float
    early_stopping: bool | str
    max_new_tokens: int


class BeamView(NamedTuple):
    """What the tab shows of a search; the tab holds a BeamView of its components, so outputs go by name."""

    sid: str | None
    tree: object
    table: str
    status: str
    compare_plot: object
    compare_md: str


@dataclass
class Search:
    key: tuple  # (model, prompt ids, settings): what it was started with
    settings: Settings
    nbytes: int  # its beams' KV cache at its longest: what the session store counts
    prompt: Prompt
    gen: Iterator  # the beam_steps generator, with the beams' KV cache inside
    steps: list = field(default_factory=list)
    result: beams.BeamResult | None = None
    compared: tuple | None = None  # (greedy Scored, beam Scored, (greedy cut, beam cut) at the token limit)
    # one session's events never interleave on its search (two Steps at once): each holds it whole
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)


SEARCHES = STORE.kind(
    "beam search",
    bytes_of=lambda search: search.nbytes,
    again="press Step",
    smaller="use fewer beams or fewer max new tokens",
)


def release_search(sid: str | None) -> None:
    """gr.State's delete_callback: a plain function, so gradio's config copy never deep-copies the searches."""
    SEARCHES.release(sid)


def settings(num_beams, length_penalty, early_stopping, max_new_tokens) -> Settings:
    """The controls' values as checked Settings, or a ValueError naming the bad one."""
    k = values.whole("number of beams", num_beams, 1, MAX_BEAMS_UI)
    max_new = values.whole("max new tokens", max_new_tokens, 1, MAX_NEW_UI)
    low, high = PENALTY_RANGE
    allowed = f"a number between {low} and {high} (1 = per-token average)"
    penalty = values.number("length penalty", length_penalty, low, high, allowed)
    early = EARLY.get(str(early_stopping).lower(), early_stopping)
    beams.check_settings(k, penalty, early, max_new)
    return Settings(num_beams=k, length_penalty=float(penalty), early_stopping=early, max_new_tokens=max_new)


@contextmanager
def _search(config: AppConfig, sid, text, template, knobs: Mapping[str, object]) -> Iterator[tuple[str, Search]]:
    """This session's search, or a new one when there is none or the settings (`knobs`, keyed by the names of
    `Settings`) changed since it began; held by this event alone until the block ends."""
    asked = settings(**knobs)
    lm = get_model(config)
    prompt = encode_prompt(lm.tokenizer, text, chat=template == CHAT, context_length=lm.context_length)
    key = (lm.model_id, tuple(prompt.ids), asked)
    sid = sid or uuid.uuid4().hex
    with SEARCHES.holding(sid) as search:
        if search is not None and search.key == key:
            yield sid, search
            return
    gen = beams.beam_steps(lm, prompt.ids, **asked._asdict())  # Settings' fields are beam_steps' arguments
    nbytes = beam_search_bytes(lm, len(prompt.ids), asked.num_beams, asked.max_new_tokens)
    with SEARCHES.storing(sid, Search(key=key, settings=asked, nbytes=nbytes, prompt=prompt, gen=gen)) as search:
        yield sid, search


def _advance(config: AppConfig, search: Search, check=None) -> None:
    """One beam step; when it was the last, collect the result and score greedy beside it (`check()` between two of
    greedy's steps: a Watch's, which raises on Stop)."""
    if search.result is None:
        with model_turn(get_model(config), "a beam search step"):  # between the scheduler's ticks
            record = next(search.gen)
            search.steps.append(record)
            if record.last:
                try:
                    next(search.gen)
                except StopIteration as stop:
                    search.result = stop.value
    if search.result is not None and search.compared is None:
        with model_turn(get_model(config), "a beam search step"):
            _compare(config, search, check)


def _compare(config: AppConfig, search: Search, check=None) -> None:
    lm, ids = get_model(config), search.prompt.ids
    greedy = scoring.greedy_sequence(lm, ids, max_new_tokens=search.settings.max_new_tokens, check=check)
    beam = scoring.score_sequence(lm, ids, search.result.token_ids)
    cut = tuple(not seq.token_ids or seq.token_ids[-1] not in lm.eos_ids for seq in (greedy, beam))
    search.compared = (greedy, beam, cut)


def step(config: AppConfig, sid, text, template, knobs: Mapping[str, object]) -> BeamView:
    with _search(config, sid, text, template, knobs) as (sid, search):
        _advance(config, search)
        return view(sid, search)


def run_to_end(
    config: AppConfig, sid, text, template, knobs: Mapping[str, object], progress=PROGRESS, request=None
) -> BeamView:
    """The search's remaining steps, then greedy scored beside it; the bar says which step. Stop (`STOPS`) ends it
    between two steps (or two of greedy's), and the status says so and how soon after the press reached the server."""
    with _search(config, sid, text, template, knobs) as (sid, search):
        max_new, watch = search.settings.max_new_tokens, STOPS.watch(request, progress)
        try:
            while search.compared is None:
                watch.check()
                at = len(search.steps) + 1
                doing = f"beam step {at} of at most {max_new}" if search.result is None else "greedy, scored beside it"
                watch.on_progress(min(at, max_new) / max_new, desc=doing)
                _advance(config, search, watch.check)
        except Cancelled:
            return view(sid, search, halted=STOPS.since_pressed(request))
        return view(sid, search)


def blank() -> BeamView:
    """What the tab shows before a search: no session, the empty tree and table."""
    return BeamView(
        sid=None,
        tree=empty_figure(TREE_BLANK, 380),
        table=beams_markdown([]),
        status="",
        compare_plot=empty_figure(COMPARE_BLANK, 300),
        compare_md="",
    )


def reset(sid) -> BeamView:
    SEARCHES.release(sid)
    return blank()


def view(sid: str, search: Search, halted: float | None = None) -> BeamView:
    """The search as it stands: its tree, beams table and status line, and greedy beside it once it ended; `halted`:
    Stop ended a Run to end, this many seconds after the press reached the server."""
    k, penalty, early, max_new = search.settings
    done = search.result is not None
    label = f"{k} beam{'s' if k > 1 else ''} · length penalty {penalty:g} · early stopping {early}"
    tree = beam_tree_figure(search.steps, penalty, done)
    table = beams_markdown(search.steps, penalty, done)
    last = search.steps[-1]
    pool = len([c for c in last.candidates if c.rank >= 0])
    status = (
        f"**Step {last.index + 1}** of at most {max_new} · {label}. This step scored "
        f"{len(last.beams)} live beam{'s' if len(last.beams) > 1 else ''} × every token in the vocabulary, kept "
        f"the best {pool} by cumulative log p; the best {k} that did not end run on."
    )
    if done:
        reason = STOP_WORDS.get(search.result.stop_reason, search.result.stop_reason)
        status += f"\n\n**Stopped**: {reason}. The answer is the finished hypothesis with the best score (★)."
    if halted is not None:
        left = "greedy was not scored beside it yet" if done else "the search can go on"
        status += (
            f"\n\n**Stopped by you**, {halted:.2f} s after you pressed Stop: {left}. Press Step or Run to end to go on."
        )
    compare_plot, compare_md = empty_figure(COMPARE_BLANK, 300), ""
    if search.compared is not None:
        greedy, beam, cut = search.compared
        name = f"beam search ({k})"
        compare_plot, compare_md = compare_figure(greedy, beam, name), compare_markdown(greedy, beam, name, cut)
    return BeamView(sid=sid, tree=tree, table=table, status=status, compare_plot=compare_plot, compare_md=compare_md)
