"""The beam tab's handlers and the server-side store of live searches.

A search in progress is a `beam_steps` generator: it holds the KV cache of every beam, so it never goes
into `gr.State`. The page keeps a short session id; `SEARCHES` maps it to the search, frees idle ones after
a time to live and holds at most `MAX_SEARCHES`. Handlers call decoding, then visuals, and return the tuple
`view` builds.
"""

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

from decoding import values
from decoding.beams import scoring
from decoding.beams import search as beams
from decoding.prompts import Prompt, encode_prompt
from ui.context import CHAT, AppConfig, get_model, model_turn
from ui.events import PROGRESS
from ui.sessions import STORE, beam_search_bytes
from visuals.beams import beam_tree_figure, beams_markdown, compare_figure, compare_markdown
from visuals.theme import empty_figure

EARLY = {"false": False, "true": True, "never": "never"}
MAX_BEAMS_UI, MAX_NEW_UI = 8, 64


STOP_WORDS = {
    "max_new_tokens": "it reached max new tokens",
    "all_finished": "early stopping = True and the finished set holds num_beams hypotheses",
    "cannot_improve": "no live beam can beat the worst finished hypothesis any more",
    "no_continuation": "every candidate ended",
}
TREE_BLANK = "Press Step: the prompt is read once per beam, then every beam grows by one token per step"
COMPARE_BLANK = "When the search ends, greedy's sequence is scored beside it"


@dataclass
class Search:
    key: tuple  # (model, prompt ids, beams, penalty, early stopping, max new): what it was started with
    prompt: Prompt
    gen: Iterator  # the beam_steps generator, with the beams' KV cache inside
    steps: list = field(default_factory=list)
    result: beams.BeamResult | None = None
    compared: tuple | None = None  # (greedy Scored, beam Scored, (greedy cut, beam cut) at the token limit)


SEARCHES = STORE.kind(
    "beam search",
    bytes_of=lambda search: beam_search_bytes(search.gen),
    again="press Step",
    smaller="use fewer beams or fewer max new tokens",
)


def release_search(sid: str | None) -> None:
    """gr.State's delete_callback: a plain function, so gradio's config copy never deep-copies the searches."""
    SEARCHES.release(sid)


def settings(k, penalty, early, max_new) -> tuple:
    """The controls as (num_beams, length_penalty, early_stopping, max_new_tokens), or a ValueError naming one."""
    k = values.whole("number of beams", k, 1, MAX_BEAMS_UI)
    max_new = values.whole("max new tokens", max_new, 1, MAX_NEW_UI)
    penalty = values.number("length penalty", penalty, -2, 3, "a number between -2 and 3 (1 = per-token average)")
    early = EARLY.get(str(early).lower(), early)
    beams.check_settings(k, penalty, early, max_new)
    return k, float(penalty), early, max_new


def _search(config: AppConfig, sid, text, template, *knobs) -> tuple[str, Search]:
    """This session's search, or a new one when there is none or the settings changed since it began."""
    k, penalty, early, max_new = settings(*knobs)
    lm = get_model(config)
    prompt = encode_prompt(lm.tokenizer, text, chat=template == CHAT, context_length=lm.context_length)
    key = (lm.model_id, tuple(prompt.ids), k, penalty, early, max_new)
    sid = sid or uuid.uuid4().hex
    search = SEARCHES.get(sid)
    if search is None or search.key != key:
        gen = beams.beam_steps(lm, prompt.ids, k, penalty, early, max_new)
        search = Search(key, prompt, gen)
        SEARCHES.put(sid, search)
    return sid, search


def _advance(config: AppConfig, search: Search) -> None:
    """One beam step; when it was the last, collect the result and score greedy beside it."""
    if search.result is not None:
        return
    with model_turn(get_model(config), "a beam search step"):  # between the scheduler's ticks
        record = next(search.gen)
        search.steps.append(record)
        if record.last:
            try:
                next(search.gen)
            except StopIteration as stop:
                search.result = stop.value
            _compare(config, search)


def _compare(config: AppConfig, search: Search) -> None:
    lm, ids = get_model(config), search.prompt.ids
    greedy = scoring.greedy_sequence(lm, ids, max_new_tokens=search.key[-1])
    beam = scoring.score_sequence(lm, ids, search.result.token_ids)
    cut = tuple(not seq.token_ids or seq.token_ids[-1] not in lm.eos_ids for seq in (greedy, beam))
    search.compared = (greedy, beam, cut)


def step(config: AppConfig, sid, text, template, *knobs):
    sid, search = _search(config, sid, text, template, *knobs)
    _advance(config, search)
    return view(sid, search)


def run_to_end(config: AppConfig, sid, text, template, *knobs, progress=PROGRESS):
    sid, search = _search(config, sid, text, template, *knobs)
    max_new = search.key[-1]
    while search.result is None:
        progress((len(search.steps), max_new), desc=f"beam step {len(search.steps) + 1} of at most {max_new}")
        _advance(config, search)
    return view(sid, search)


def reset(sid):
    SEARCHES.release(sid)
    return None, empty_figure(TREE_BLANK, 380), beams_markdown([]), "", empty_figure(COMPARE_BLANK, 300), ""


def view(sid: str, search: Search) -> tuple:
    """(session id, tree, beams table, status line, comparison figure, comparison text)."""
    _, _, k, penalty, early, max_new = search.key
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
    if search.compared is None:
        return sid, tree, table, status, empty_figure(COMPARE_BLANK, 300), ""
    greedy, beam, cut = search.compared
    name = f"beam search ({k})"
    return sid, tree, table, status, compare_figure(greedy, beam, name), compare_markdown(greedy, beam, name, cut)
