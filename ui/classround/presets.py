"""The prompts a teacher starts a round on, each chosen for what the class sees at its first step on the bundled model
(SmolLM2-135M-Instruct, float32), and what a shared link may set on the tab (`?tab=classround&preset=best-pet&kind=
sample&temperature=1.5`, or a student's `?round=K7QF`)."""

from dataclasses import dataclass
from typing import NamedTuple

from decoding.classround.codes import normal_code
from decoding.classround.records import KINDS, SAMPLE
from decoding.knobs import KNOBS
from ui.events import error_html
from ui.links import preset_in_link


@dataclass(frozen=True)
class Preset:
    prompt: str
    chat: bool  # the prompt as one user turn of the chat template
    watch: str  # one sentence: what the class sees


PRESETS = {
    "Best pet: a near tie": Preset(
        "The best pet is a",
        False,
        "Three tokens share most of the probability (␣cat 22%, ␣pet 21%, ␣dog 16%): guesses split, and so do draws.",
    ),
    "Capital of France: one favourite": Preset(
        "The capital of France is",
        False,
        "One token, ␣Paris, holds 77% of the probability: most guess it, most draws take it, not all.",
    ),
    "Favourite colour: many choices": Preset(
        "My favourite colour is",
        False,
        "No token holds even an eighth (␣blue 11%): temperature and top-p change the histogram most here.",
    ),
    "Tell me a story: a chat prompt": Preset(
        "Tell me a story",
        True,
        "A story can start many ways (The 22%, There 9%, Once 8%): the class's texts part at once.",
    ),
}
DEFAULT_PRESET = next(iter(PRESETS))
DEFAULT_KIND = SAMPLE
LINK_KNOBS = ("temperature", "top_k", "top_p", "min_p")  # the knobs a link may set, by their link names


class LinkSetup(NamedTuple):
    """What a link asks of the tab: a preset to pick, a kind, knobs, a round to join, and what was wrong in it."""

    preset: str | None
    kind: str | None
    knobs: dict
    round: str | None
    message: str  # the message line's content ("" when nothing was wrong)


def link_setup(query: dict) -> LinkSetup:
    """The tab's part of a link (nothing for a link to another tab); a wrong value is said, the rest still applies."""
    if query.get("tab") != "classround":
        return LinkSetup(None, None, {}, None, "")
    asked = preset_in_link(query, "classround", PRESETS)
    problems = [asked.message] if asked.message else []
    kind = query.get("kind")
    if kind is not None and kind not in KINDS:
        problems.append(error_html(ValueError(f"the link's kind {kind!r} is not one of {', '.join(KINDS)}")))
        kind = None
    knobs = {}
    for name in LINK_KNOBS:
        if name in query:
            try:
                knobs[name] = KNOBS[name].check(query[name])
            except ValueError as err:
                problems.append(error_html(err))
    code = None
    if query.get("round"):
        try:
            code = normal_code(query["round"])
        except ValueError as err:
            problems.append(error_html(err))
    return LinkSetup(asked.name, kind, knobs, code, "".join(problems))
