"""Who shares the batch: the learner's prompt in row 0, and either copies of it or other people's prompts.

"same-length": every row is the prompt, so no row is padded and only the batch size changes the shapes.
"padded": the other rows are the prompts below, of different lengths (the first is longer than most prompts,
so row 0 is padded from a batch of 2 on), left-padded to the longest, as a server batches strangers' requests.
The settings of a batching run are checked here too, with errors that name the bad value and the range.
"""

from numbers import Integral

from decoding.models import DTYPES, LoadedModel, load_model

CONDITIONS = ("same-length", "padded")
DTYPE_NAMES = tuple(DTYPES)  # float32, bfloat16, float16
DEFAULT_DTYPE = "bfloat16"
MAX_BATCH = 64
MAX_NEW_TOKENS = 256

BATCHMATES = (
    "The history of the printing press begins in the fifteenth century, when a goldsmith in Mainz combined movable "
    "metal type, oil-based ink and a wooden screw press into a system that could",
    "Write a short poem about autumn leaves.",
    "Q: What is the boiling point of water at sea level?\nA:",
    "def fibonacci(n):",
    "My grandmother's recipe for apple pie starts with a cold butter crust, because warm butter melts into the flour "
    "and the pastry turns",
    "Hi!",
    "Explain to a ten-year-old why the sky is blue, using an example they could try at home.",
    "The three primary colours are",
    "Dear hiring manager, I am writing to apply for the position of junior data analyst advertised on your website "
    "last week. During my studies I",
    "Translate to French: The cat is sleeping on the sofa.",
    "In 1969, astronauts",
    "A list of things to pack for a weekend camping trip:\n1.",
    "The mitochondria is",
    "She opened the old wooden box in the attic and found a bundle of letters tied with a faded blue ribbon. "
    "The first one was dated",
    "import numpy as np\n\n# compute the mean of each column\n",
    "Why do cats purr?",
    "The rules of chess say that a pawn",
    "Summarise the plot of Romeo and Juliet in two sentences.",
    "It was a dark and stormy night;",
    "Photosynthesis converts sunlight, water and carbon dioxide into glucose and oxygen. The process happens "
    "mainly in the leaves, inside small structures called",
    "Top tips for learning a new language:",
    "The capital of Australia is",
    "Once the train left the station, the conductor walked down the aisle and",
    "SELECT name, email FROM users WHERE",
    "A haiku about the ocean:",
    "Good morning! Today we will talk about",
    "The main difference between a virus and a bacterium is that",
    "Breaking news: scientists have discovered a new species of frog in the rainforests of",
    "How many legs does a spider have?",
    "The best way to make a cup of tea is to boil fresh water, warm the pot, and then",
    "Thank you for your order.",
)

# open-ended openings for the many-runs mode: long continuations with near-ties somewhere along the way
MANY_PROMPTS = (
    "Once upon a time, in a small village by the sea,",
    "The old lighthouse keeper",
    "It was the last day of summer, and",
)


def batchmates(batch_size: int) -> list[str]:
    """The other rows' prompts for one batch (the list repeats past its end, for batches above 32)."""
    return [BATCHMATES[i % len(BATCHMATES)] for i in range(batch_size - 1)]


def rows_for(lm, prompt_ids: list[int], batch_size: int, condition: str, new_tokens: int) -> list[list[int]]:
    """The token ids of every row of one batch; row 0 is the prompt."""
    if condition == "same-length":
        rows = [list(prompt_ids)] * batch_size
    else:
        rows = [list(prompt_ids)] + [lm.tokenizer(m).input_ids for m in batchmates(batch_size)]
    longest = max(len(r) for r in rows)
    if longest + new_tokens > lm.context_length:
        raise ValueError(
            f"the longest row ({longest} tokens) + {new_tokens} new tokens exceeds the context window of "
            f"{lm.context_length} tokens: shorten the prompt or ask for fewer tokens"
        )
    return rows


def check_inputs(prompt: str, batch_sizes, condition: str, new_tokens: int, dtype: str | None) -> list[int]:
    """Teaching ValueErrors for bad settings; returns the batch sizes, sorted, without repeats."""
    sizes = list(batch_sizes) if batch_sizes is not None else []
    if not sizes or any(not isinstance(b, Integral) or isinstance(b, bool) or not 1 <= b <= MAX_BATCH for b in sizes):
        raise ValueError(f"batch sizes must be whole numbers in [1, {MAX_BATCH}], got {batch_sizes!r}")
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    if not isinstance(new_tokens, Integral) or isinstance(new_tokens, bool) or not 1 <= new_tokens <= MAX_NEW_TOKENS:
        raise ValueError(f"new tokens must be a whole number in [1, {MAX_NEW_TOKENS}], got {new_tokens!r}")
    if dtype is not None and dtype not in DTYPE_NAMES:
        raise ValueError(f"dtype must be one of {DTYPE_NAMES}, got {dtype!r}")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("the prompt is empty: type some text (or pick a preset)")
    return sorted({int(b) for b in sizes})


def resolve_model(lm, dtype: str | None = None, device: str = "auto") -> LoadedModel:
    """A LoadedModel (reloaded as its `dtype` copy when another dtype is asked for) or a model id."""
    if isinstance(lm, str):
        return load_model(lm, device, dtype or DEFAULT_DTYPE)
    if dtype is not None and dtype != lm.dtype_name:
        return load_model(lm.model_id, str(lm.device), dtype)
    return lm
