"""The Speculative decoding tab's presets: a prompt and the draft that show one lesson each (what the Try-this steps
walk through)."""

from dataclasses import dataclass

from ui.context import CHAT
from ui.speculative.handlers import SOURCES

LOOKUP, EARLY = list(SOURCES)  # the draft radio's labels

COPY = (
    "Fix the spelling in this paragraph and return the whole paragraph: The quick brown fox jumps over the lazzy dog. "
    "The dog was not amused, and the fox ran back into the forrest before anyone could catch it. Later that evening "
    "the fox came back to the river, drank some water, and fell asleep under an old oak tree. In the morning the dog "
    "was waiting by the tree, but the fox had already gone home to its family."
)
STORY = "Tell me a story about a dragon who learns to paint."


@dataclass(frozen=True)
class Preset:
    """What a preset sets; the engine order stays as the learner left it, and the seed too unless `seed` is set."""

    prompt: str
    note: str
    max_new: int
    template: str = CHAT
    source: str = LOOKUP
    k: int = 8
    layer: int = 8
    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    seed: int | None = None  # a sampling preset's seed: the draws it was chosen for


PRESETS = {
    "Copy-edit: prompt lookup shines": Preset(
        prompt=COPY,
        max_new=120,
        note="The answer copies the prompt, so what followed the last token where it occurred earlier is usually "
        "right.",
    ),
    "Open story: nothing to copy": Preset(
        prompt=STORY,
        max_new=80,
        note="A new story repeats little of its prompt: lookup rarely matches, and its few guesses are wrong.",
    ),
    "Early exit: cheap, mostly wrong": Preset(
        prompt=COPY,
        source=EARLY,
        k=3,
        max_new=40,
        note="The first 8 layers only, then the final norm and head: each guess costs a fraction of a pass and is "
        "rarely right.",
    ),
    "Sampling: the accept rule": Preset(
        prompt=COPY,
        k=5,
        max_new=80,
        temperature=1.0,
        top_p=0.95,
        seed=4,  # round 1 rejects a guess the target gives p = 0; round 3 keeps two, then rejects one at u 0.96 > 0.92
        note="At temperature 1 each guess is kept with probability p(guess): watch the uniform against the bar.",
    ),
}
DEFAULT = "Copy-edit: prompt lookup shines"
