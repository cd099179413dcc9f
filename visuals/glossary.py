"""The lessons' terms, each explained in one line for a student who knows tokens and probabilities, and the one way a
page shows a term: underlined with its explanation on hover (`term`), or as a "what is this" line (`explain`)."""

import html

TERMS = {
    "KV cache": "the keys and values of every token the model has read, kept so the next pass reads only the new "
    "token; cropped back means the rows for rejected guesses are thrown away",
    "tick": "one round of the server's scheduler: it gathers every pending Step and runs them as one forward pass",
    "chunked prefill": "a long new prompt is read a slice per tick, so the students already decoding are not held up "
    "behind it",
    "no padding": "the students' tokens are laid end to end in one row, so no compute goes to filler tokens that "
    "make uneven rows the same length",
    "bit-exact with generate()": "every logit equals, to the last bit, what the model computes for this text alone "
    "(transformers' generate()), so sharing a pass cannot change the pick",
    "batching noise": "the largest difference between a logit computed in a shared pass and the same logit computed "
    "alone: float32 sums added in another order round differently in the last digits",
    "stopped: eos": "the model chose its end-of-sequence token (eos): the answer is finished",
    "illegal mass": "the probability the model had put on tokens the grammar forbids here, taken away by the mask",
    "fast-forward": "when the grammar allows only one continuation, those tokens are appended without sampling and "
    "without a forward pass of their own",
    "kept": "a guess is kept when the target agrees (greedy: it is the target's own pick; sampling: the uniform fell "
    "below min(1, p/q)); 0 of 0 means there was no guess to check",
}


def term(name: str, shown: str | None = None) -> str:
    """`shown` (default: the term itself), dotted-underlined, with the term's one-line explanation on hover."""
    return f'<abbr class="lab-term" title="{html.escape(TERMS[name])}">{html.escape(shown or name)}</abbr>'


def explain(name: str) -> str:
    """A "what is this" line for the term, in Markdown."""
    return f"*{name}*: {TERMS[name]}."


def stop_reason(reason: str) -> str:
    """Why a run stopped, with eos explained (other reasons, like max new tokens, say themselves)."""
    return term("stopped: eos", reason) if reason == "eos" else html.escape(reason)
