"""The words of the step-by-step lesson: the walk-through beside the knobs, and presets that each teach one
thing, with one sentence on what to watch. Every claim here is performed and checked by tests/test_step_lessons_e2e.py
on the bundled model; a claim that depends on the draw names its seed."""

from dataclasses import dataclass

from ui.context import CHAT, RAW
from ui.links import slugs
from visuals.glossary import term

WALKTHROUGH = f"""1. With the preset **Confident**, press **Prefill**: one bar, ␣Paris, holds most of the probability
   (0.77). Press **Step** three times.
2. Press **Back**, drag **Temperature** to 2: the same {term("logit", "logits")}, flatter. With seed 0 the tallest
   bar drops from 0.36 to 0.02; the dashes (the model's own probabilities) stay where they were. Press **Step**.
3. Pick a short bar under the chart (**Force a token**) and press **Force** (or click the bar): the run branches
   from an unlikely token, its chip dashed.
4. Pick **Greedy loop**, **Prefill**, **Run to end**: temperature 0 repeats "I'm a cat." Open *More settings*
   below the knobs, set **Repetition penalty** to 1.3, press **Prefill** and **Run to end** again: the loop is
   gone.
5. Look at **Time** further down: prefill is one pass over the whole prompt; every token after it costs one more
   pass.
"""


@dataclass(frozen=True)
class Preset:
    prompt: str
    template: str
    temperature: float
    top_k: int
    top_p: float
    min_p: float
    repetition: float
    max_new_tokens: int
    watch: str  # one sentence: what to watch


PRESETS = {
    "Confident: capital of France": Preset(
        "The capital of France is",
        RAW,
        1.0,
        0,
        1.0,
        0.0,
        1.0,
        12,
        "One bar (␣Paris, p = 0.77) holds most of the probability, so a draw usually takes it. Not always: with "
        "seed 0 the third Step draws ␣To, a bar of p = 0.003.",
    ),
    "Open: tell me a story": Preset(
        "Tell me a story",
        CHAT,
        1.0,
        0,
        1.0,
        0.0,
        1.0,
        48,
        "No bar holds even a quarter of the probability (entropy 4.9 bits; Confident's is 2.1). Set the seed to 1 "
        "(under More settings) and press Prefill again: the story starts another way.",
    ),
    "Greedy loop": Preset(
        "I like cats. I like dogs. I like",
        RAW,
        0.0,
        0,
        1.0,
        0.0,
        1.0,
        40,
        'Temperature 0 always takes the top bar, and the text loops ("I\'m a cat." again and again). Then set '
        "repetition penalty 1.3 and press Prefill again.",
    ),
    "High temperature": Preset(
        "Write one sentence about the sea.",
        CHAT,
        1.8,
        0,
        1.0,
        0.0,
        1.0,
        40,
        "At 1.8 the bars flatten and unlikely tokens get drawn: with seed 0, most of the 40 tokens had a model "
        "probability under 0.01 (pale chips). Set min-p 0.1 (under More settings) and press Prefill again: such draws "
        "become rare.",
    ),
}
DEFAULT_PRESET = next(iter(PRESETS))
# the short names a shared link uses: ?preset=confident (the rule every tab's links follow, ui/links.py)
SLUGS = slugs(PRESETS)
