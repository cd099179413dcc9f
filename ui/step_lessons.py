"""The words of the step-by-step lesson: the walk-through at the top of the tab, and presets that each
teach one thing, with one sentence on what to watch."""

from dataclasses import dataclass

from ui.context import CHAT, RAW

WALKTHROUGH = """**Try this**
1. Pick the preset **Confident**, press **Prefill**: one bar holds most of the probability. Press **Step** three times.
2. Press **Back**, drag **temperature** to 2: the chart redraws the *same* logits, flatter. Press **Step**.
3. Click a short bar (or pick it under the chart and press **Force**): the run branches from an unlikely token.
4. Pick **Greedy loop**, **Prefill**, **Run to end**: temperature 0 repeats itself. Set repetition penalty 1.3.
5. Look at **Time**: prefill is one pass over the whole prompt; every token after it costs one more pass.
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
        "One bar holds most of the mass, so greedy and sampling agree. Watch the gap in the chart's title.",
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
        "Many tokens share the mass (high entropy): press Back, then Step again, and the story forks.",
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
        "Temperature 0 always takes the top bar, and the text loops. Then set repetition penalty 1.3.",
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
        "At 1.8 the bars flatten and unlikely tokens get picked (pale chips). Add min-p 0.1 and compare.",
    ),
}
