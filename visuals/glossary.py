"""The lessons' terms, each explained in one line for a student who knows tokens and probabilities, and the one way a
page shows a term: underlined with its explanation on hover (`term`), or as a "what is this" line (`explain`)."""

import html

TERMS = {
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
    # quantization and the lens
    "nats": "the unit of KL here (natural logarithms): 0 means the two distributions are identical; 0.01 is a "
    "barely visible change, 1 a very different distribution",
    "KL": "KL divergence: how far the format's next-token distribution is from float32's, weighted by float32's "
    "probabilities; 0 when they are identical",
    "top-1": "the most likely next token; 'same top-1' means float32 and the format would both pick it greedily",
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
    "matmul": "a matrix multiplication; here the LM head's, one per layer the lens reads",
    "first = final": "the first layer whose top token is already the one the model finally takes",
    "half p": "the first layer where the final token has at least half the probability it ends with",
    "entropy": "how spread out the next-token distribution is, in bits: 0 when one token has all the "
    "probability, log2 of the count when n tokens share it equally",
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
