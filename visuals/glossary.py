"""The lessons' terms, each explained in one line for a student who knows tokens and probabilities, and the one way a
page shows a term: a dotted-underlined button that opens its explanation under it on a click, a tap or Enter and
closes it the same way (or on Escape, or a click elsewhere), with the explanation on hover too (`term`), or as a "what
is this" line (`explain`). No tab keeps a list of its own: a term a student may not know is an entry here.

The rule the pages keep (tests/e2e/test_glossary_e2e.py reads every tab for it): the FIRST time a tab shows a term, in
its prose (not in a control's label, a button, a chart or code), that use is `term(...)`; later uses are plain words.
The scan finds a term by its key (`word`), written as here (case and all), as a whole word; a key may also take a
plural "s" ("logits"), and a lowercase key a capital first letter at the start of a sentence ("Softmax ..."). Text that
is data, not prose written beside its term (a model's label, a sentence kept in decoding/), is marked by `glossed`.

A key is the word the pages print. A few keys are also everyday words that the pages use in their everyday sense too
("top-p keeps 3 tokens", "tick the box", "simulated students"): no scan of plain text can tell the two senses apart,
so those keys are listed in EVERYDAY, the scan leaves them out, and the lessons mark them where they mean the
glossary's sense (a speculative round's "0 of 8 kept", the serving lesson's "tick")."""

import html
import re

TERMS = {
    # what one step computes
    "forward pass": "one run of the model over its input, every layer once, ending in one logit per vocabulary "
    "token for the next position",
    "argmax": "the token with the largest logit, so the highest probability: greedy decoding takes it, with no "
    "randomness at all",
    "top-1 − top-2 gap": "the likeliest token's probability minus the second's: near 0 the two are almost tied, and "
    "a tiny change can swap them",
    "engine order": "the order in which an engine (transformers, vLLM, llama.cpp) applies the sampler stages: the "
    "same settings in another order can keep different tokens",
    "eager": "the model run as plain PyTorch, one operation after another, its KV cache growing by a token each step",
    "static cache": "a KV cache allocated once for the whole run, so every step has the same shapes and can be "
    "recorded once and replayed",
    "CUDA graph": "a GPU step recorded once and replayed as one launch, which saves the CPU the time to start each "
    "of its thousands of small kernels",
    "logit": "the model's raw score for one token, before softmax: a higher logit means a likelier token, and only "
    "the differences between logits matter",
    "softmax": "turns the logits into probabilities: exp of each logit divided by the sum over the whole vocabulary, "
    "so they are positive and add up to 1",
    "KV cache": "the keys and values of every token the model has read, kept so the next pass reads only the new "
    "token; cropped back means the rows for rejected guesses are thrown away",
    "prefix cache": "the server keeps each prompt's keys and values in blocks of 16 tokens, named by a hash of the "
    "block and everything before it; a prompt that starts with cached blocks copies them instead of computing them",
    "KV block": "16 positions of one prompt's keys and values, through every layer; its hash names its tokens and "
    "its parent block's hash, so equal hashes mean the whole prefix is equal",
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
    # where the time goes
    "roofline": "a chart of the speed a machine can reach against the work done per byte read: a slope where memory "
    "bandwidth is the limit, a flat ceiling where the matmul units are",
    "arithmetic intensity": "the FLOPs a step does per byte it reads from memory: below the machine's ridge point it "
    "waits on memory, above it on the arithmetic",
    "MBU": "model bandwidth utilisation: the bytes a decode step must read, per second, as a share of the memory "
    "bandwidth the machine reaches; near 100% means decode is as fast as memory allows",
    "TTFT": "time to first token: from the request to its first output token, the prefill pass plus choosing that "
    "token",
    "TPOT": "time per output token: the time after the first token divided by the tokens written after it, decoding's "
    "pace",
    # quantization and the lens
    "nats": "the unit of KL here (natural logarithms): 0 means the two distributions are identical; 0.01 is a "
    "barely visible change, 1 a very different distribution",
    "KL": "KL divergence: how far the format's next-token distribution is from float32's, weighted by float32's "
    "probabilities; 0 when they are identical",
    "top-1": "the most likely next token, the one greedy decoding takes; 'same top-1' means two computations (float32 "
    "and a format) would both take it",
    "points": "percentage points: two probabilities of 41% and 37% are 4 points apart",
    "per-channel": "one scale for each output row of a weight matrix, so a row of small weights is not rounded on "
    "the scale of a row of large ones",
    "group": "a run of consecutive inputs of one row that share a scale (and a minimum): group 32 means a new scale "
    "every 32 weights; smaller groups round more finely and cost more bytes",
    "outliers": "LLM.int8()'s outlier features: a few hidden dimensions whose activations are 10-100× larger than "
    "the rest; one int8 scale for the whole tensor then rounds the small ones to zero",
    "LM head": "the last matrix of the model (vocabulary × hidden size) that turns the final hidden state into one "
    "logit per token; SmolLM2 ties it to the token embedding",
    "Q4_1": "llama.cpp's int4 block format: 32 weights of 4 bits, a float16 scale and a float16 minimum: 20 bytes "
    "per 32 weights, 5 bits a weight",
    "Q8_0": "llama.cpp's int8 block format: 32 weights of 8 bits and a float16 scale: 34 bytes per 32 weights, "
    "8.5 bits a weight",
    "Q4_K_M": "a llama.cpp mix: most matrices in 4-bit blocks, some (part of the attention and feed-forward "
    "outputs) in 6 bits: which tensors get more bits is part of the format",
    "GGUF": "llama.cpp's file format: the tokenizer, the settings and every tensor in its own stored type",
    "GEMV": "a matrix times one vector: what each linear layer does for one new token in a decode step, reading "
    "every weight once",
    "F.linear": "PyTorch's plain matrix multiply for a linear layer (torch.nn.functional.linear), here in float32: "
    "the reference every kernel is timed against",
    "fbgemm": "Facebook's CPU library of low-precision matrix kernels; its dynamic int8 linear rounds each input "
    "to int8 on the fly and multiplies int8 by int8",
    "_weight_int8pack_mm": "PyTorch's CPU kernel for int8 weights times float activations: it converts each weight "
    "to float as it multiplies",
    "simulated": "rounded weights kept as float32 and multiplied in float32: exactly the format's distribution, at "
    "float32's speed and bytes",
    "wikitext-2": "a standard benchmark text of Wikipedia articles; llama.cpp reports perplexity on it",
    "perplexity": "how surprised the model is by a text: exp of its mean negative log-probability per token; "
    "lower is better, and a format's change of it is what llama.cpp reports",
    "eos": "the end-of-sequence token: the model says its answer is finished",
    "chat template": "the markers (<|im_start|>user ... <|im_end|>) an instruction model was trained to read; "
    "without them a chat model may end its turn at once",
    "final norm": "the RMSNorm the model applies to the last layer's output before the LM head; the lens applies "
    "it to every layer's hidden state too",
    "matmul": "a matrix multiplication, the bulk of a model's arithmetic (every linear layer is one); the lens "
    "does one with the LM head per layer it reads",
    "first = final": "the first layer whose top token is already the one the model finally takes",
    "half p": "the first layer where the final token has at least half the probability it ends with",
    "entropy": "how spread out the next-token distribution is, in bits: 0 when one token has all the "
    "probability, log2 of the count when n tokens share it equally",
}

# keys that are also everyday words, used on the pages in their everyday sense too: the scan of the pages cannot tell
# the senses apart, so it leaves these to the lessons (which mark them where they mean the glossary's sense)
EVERYDAY = frozenset({"kept", "points", "group", "simulated", "tick"})


def term(name: str, shown: str | None = None) -> str:
    """`shown` (default: the term itself) as a button, dotted-underlined like a word, that opens the term's one-line
    explanation under it on a click, a tap or Enter and closes it the same way (`JS`, `CSS`); its title is the same
    explanation, shown on hover. A button, not an `abbr` that shows its title on hover alone: a phone and a projector's
    remote have no hover. gr.Markdown's sanitizer keeps a button's class and title (not its aria attributes, which the
    page's script sets as it opens)."""
    return (
        f'<button type="button" class="lab-term" title="{html.escape(TERMS[name])}">'
        f"{html.escape(shown or name)}</button>"
    )


def word(name: str) -> re.Pattern:
    """The term as a whole word, as the scan and `glossed` find it: as written, or with a plural "s", or (a lowercase
    term) with a capital first letter; not a piece of a file name ("model.Q4_1.gguf")."""
    head = f"[{name[0]}{name[0].upper()}]" if name[0].islower() else re.escape(name[0])
    return re.compile(rf"(?<![\w.]){head}{re.escape(name[1:])}s?(?![\w]|\.\w)")


def glossed(text: str, *names: str) -> str:
    """Plain text as HTML, with the first use of each term in `names` marked (as `term`, in the words it is shown)."""
    hits = sorted((m.start(), m.end(), name) for name in names if (m := word(name).search(text)))
    out, at = [], 0
    for start, end, name in hits:
        if start >= at:  # a term inside another term's words stays part of it
            out += [html.escape(text[at:start], quote=False), term(name, text[start:end])]
            at = end
    return "".join(out) + html.escape(text[at:], quote=False)


def model_label(label: str) -> str:
    """A model's label as HTML, its file format and weight type marked where it names them (the bundled model's:
    "SmolLM2-135M-Instruct (bundled GGUF Q4_1, dequantized)")."""
    return glossed(label, "GGUF", "Q4_1")


def explain(name: str) -> str:
    """A "what is this" line for the term, in Markdown."""
    return f"*{name}*: {TERMS[name]}."


def stop_reason(reason: str) -> str:
    """Why a run stopped, with eos explained (other reasons, like max new tokens, say themselves)."""
    return term("stopped: eos", reason) if reason == "eos" else html.escape(reason)


# a term's explanation shown under it while it is open: fixed, so a block that clips its overflow (a heading's, a table
# cell's) does not cut it off, at the place the text leaves it (after the term) and a line lower; the open term shaded;
# on a phone the explanation spans the window less a margin, so a term near the right edge does not push it past the
# edge. A term opened on the window's last lines is scrolled up first (its scroll margin), so the explanation under it
# is not cut off by the window's edge: nine lines of 1em hold the 1.7em gap and the longest explanation's five lines.
# The button is drawn as the word it is (the sentence's font, colour and line), and its explanation in the page's
# type size (projector mode's 1.4x included)
CSS = """
button.lab-term {
  display: inline; font: inherit; color: inherit; background: none; border: 0; padding: 0; margin: 0;
  line-height: inherit; text-align: inherit; box-shadow: none; min-width: 0; min-height: 0;
  text-decoration: underline dotted; text-underline-offset: 2px; cursor: help; scroll-margin-bottom: 9em;
}
button.lab-term:focus-visible { outline: 2px solid currentColor; outline-offset: 1px; border-radius: 2px; }
button.lab-term[aria-expanded="true"] { background: rgba(128, 128, 128, 0.3); border-radius: 2px; }
button.lab-term[aria-expanded="true"]::after {
  content: attr(title); position: fixed; z-index: 1000; margin-top: 1.7em; max-width: 24em;
  padding: 4px 8px; border-radius: 4px; background: #262626; color: #fff;
  font-size: calc(14px * var(--lab-type, 1)); font-weight: 400; font-style: normal; line-height: 1.35;
  white-space: normal; text-align: left; text-decoration: none; text-transform: none; letter-spacing: normal;
}
@media (max-width: 640px) {
  button.lab-term[aria-expanded="true"]::after { left: 8px; right: 8px; max-width: none; }
}
"""

# the one script every page with terms needs: a click on a term (a tap, or Enter or Space on it, which a button turns
# into a click) opens it and closes any other; a second click on it, a click elsewhere or Escape closes it. Delegated
# from the document, so a term in HTML an answer drew later works as one drawn with the page
JS = """
(() => {
  const open = () => document.querySelectorAll('button.lab-term[aria-expanded="true"]');
  document.addEventListener('click', e => {
    const t = e.target instanceof Element ? e.target.closest('button.lab-term') : null;
    for (const o of open()) if (o !== t) o.setAttribute('aria-expanded', 'false');
    if (t) t.setAttribute('aria-expanded', t.getAttribute('aria-expanded') === 'true' ? 'false' : 'true');
  }, true);
  document.addEventListener('keydown', e => {
    if (e.key === 'Escape') for (const o of open()) o.setAttribute('aria-expanded', 'false');
  });
})();
"""
HEAD = f"<script>{JS}</script>"
