"""What each layer would have said: the logit lens.

A decoder reads only its last layer's hidden state out, through its final norm and LM head. The logit lens reads
every layer's the same way (nostalgebraist 2020, "interpreting GPT: the logit lens"): row 0 the embeddings, row l
the output of layer l, each through the final norm and the head, gives the distribution the model would have
produced had it stopped there. Early rows read poorly through a head trained for the last one; the tuned lens
(Belrose et al. 2023, arXiv:2303.08112) learns a small map per layer for that reason. The early-exit draft
(decoding.speculative.drafts) is exactly this read at layer L, so a layer whose lens rarely picks the final token
makes a draft whose guesses are rarely kept.

transformers 5 (like 4.x) returns `hidden_states` as layers + 1 rows, embeddings first, and its last row is already
after the final norm (capture_outputs ties it to `last_hidden_state`): every row but the last is normed here.
The head reads all rows in one matmul ((L + 1, H) x (H, V)), so its weights are read once, not once per layer.

Over a finished run, `run_agreement` reads the lens at every position that chose a written token, from one more
pass over the whole text (prompt and written tokens, no cache): per layer, the share of steps whose lens top-1 is
the token the run wrote. That pass computes all positions at once, where the run computed them one by one; in
float32 the two can differ in the last bits, which could only flip a near-tie (tests/test_lens.py checks a greedy
run of the bundled model: no flip).
"""

from dataclasses import dataclass

import torch

from decoding.clock import Timer
from decoding.forward import forward_hidden, rewind
from decoding.models import LoadedModel
from decoding.prompts import token_texts

TOP = 5  # tokens shown per layer
# the run's lens in chunks of (layer, position) rows, each chunk's logits at most this: 1365 rows of the bundled
# model's 49152 float32 logits (a 44-step run in one matmul; fewer, larger matmuls ran 17% faster here than 256 rows)
LOGITS_BYTES = 256 << 20


@dataclass
class LayerLens:
    """One position's lens as plain data: per row (0 = embeddings, l = layer l) its top tokens and probabilities,
    and the probability it gives the final row's top-1. The final row is the model's own distribution."""

    top_ids: list[list[int]]  # (L + 1, TOP)
    top_probs: list[list[float]]  # (L + 1, TOP)
    top_texts: list[list[str]]
    final_prob: list[float]  # (L + 1,) each row's probability of the final top-1
    final_id: int
    ms: float  # the extra pass and the lens, measured
    device: str = ""
    model: str = ""
    dtype: str = ""

    @property
    def layers(self) -> int:
        return len(self.top_ids) - 1

    def first_agreeing(self) -> int | None:
        """The first row whose top-1 is the final choice."""
        return next((i for i, ids in enumerate(self.top_ids) if ids[0] == self.final_id), None)

    def first_half(self) -> int | None:
        """The first row that gives the final top-1 at least half the probability the final row gives it."""
        half = self.final_prob[-1] / 2
        return next((i for i, p in enumerate(self.final_prob) if p >= half), None)


def final_norm(lm: LoadedModel) -> torch.nn.Module:
    base = getattr(lm.model, lm.model.base_model_prefix)
    return base.norm if hasattr(base, "norm") else base.ln_f


@torch.inference_mode()
def lens_logits(hidden: torch.Tensor, norm, head) -> torch.Tensor:
    """hidden (L + 1, H) as transformers returns it (the last row already normed) -> float32 logits (L + 1, V)."""
    normed = torch.cat([norm(hidden[:-1]), hidden[-1:]])  # (L + 1, H)
    return head(normed).to(dtype=torch.float32)  # (L + 1, V), one matmul


@torch.inference_mode()
def hidden_pass(lm: LoadedModel, ids: list[int], cache):
    """The last position again, in a pass of its own with every layer's hidden state: the cache is rewound by one
    and the last token fed (the pass `Run.refeed` makes). Returns float32 logits (V,), hidden (L + 1, H), cache."""
    past = len(ids) - 1
    rewind(cache, past)
    logits, states, cache = forward_hidden(lm, torch.tensor([ids[-1:]], device=lm.device), cache, past)  # (1, V)
    hidden = torch.stack([h[0, -1] for h in states])  # (L + 1, H)
    return logits[0], hidden, cache


def read(lm: LoadedModel, logits: torch.Tensor, hidden: torch.Tensor, ms: float = 0.0, top: int = TOP) -> LayerLens:
    """The lens of one position; its final row is softmax(`logits`), the model's own (the chart's, bit for bit)."""
    probs = torch.softmax(lens_logits(hidden, final_norm(lm), lm.model.get_output_embeddings()), dim=-1)  # (L+1, V)
    probs[-1] = torch.softmax(logits.to(dtype=torch.float32), dim=-1)
    final_id = int(torch.argmax(probs[-1]))
    top_p, top_ids = torch.topk(probs, k=min(top, probs.shape[-1]), dim=-1)  # (L + 1, TOP)
    ids = top_ids.tolist()
    named = sorted({t for row in ids for t in row})
    texts = dict(zip(named, token_texts(lm.tokenizer, named)))
    return LayerLens(
        top_ids=ids,
        top_probs=top_p.tolist(),
        top_texts=[[texts[t] for t in row] for row in ids],
        final_prob=probs[:, final_id].tolist(),
        final_id=final_id,
        ms=ms,
        device=str(lm.device),
        model=lm.label,
        dtype=lm.dtype_name,
    )


def lens_run(run) -> LayerLens:
    """The lens of a run's pending distribution (a decoding.loop.Run): one extra pass over its last position, whose
    logits become the pending ones, as after `refeed`, so the step chooses from exactly what the lens shows."""
    with Timer(run.lm.device) as t:
        # the run owns its state: it makes the pass, and the step then chooses from this pass's logits
        logits, hidden = run.pass_with(hidden_pass)
        lens = read(run.lm, logits, hidden)
    lens.ms = t.ms
    return lens


def agreement(lenses: list[LayerLens], chosen: list[int]) -> list[float]:
    """Per row 0..L: the share of steps whose lens top-1 there equals the token the step chose."""
    if not lenses:
        return []
    rows = len(lenses[0].top_ids)
    return [sum(x.top_ids[r][0] == c for x, c in zip(lenses, chosen)) / len(lenses) for r in range(rows)]


def first_guesses(rounds) -> tuple[int, int, int]:
    """Over an early-exit run's rounds (decoding.speculative.records.Round) that drafted a guess: how many kept their
    first guess, how many had the draft's top-1 (the lens at L) equal to the target's top-1 there, and how many.
    In greedy rounds the two counts are the same event: the first guess is kept exactly when layer L's lens picks
    the final token."""
    guessed = [r.checks[0] for r in rounds if r.drafted]
    kept = sum(bool(c.accepted) for c in guessed)
    agreed = sum(max(c.top, key=lambda t: t[3])[0] == c.target_id for c in guessed)
    return kept, agreed, len(guessed)


@dataclass
class RunAgreement:
    """Over a run's written tokens, per row 0..L: the share of steps whose lens top-1 at the position that chose the
    token (the one before it) is the token the run wrote. The last row is the final layer's own share: 1 for a
    greedy run, below 1 where the run sampled another token or one was forced."""

    shares: list[float]  # (L + 1,)
    steps: int
    ms: float  # the pass over the whole text and the lens of every row, measured
    device: str = ""
    model: str = ""
    dtype: str = ""

    @property
    def final_share(self) -> float:
        return self.shares[-1]


@torch.inference_mode()
def written_top1(lm: LoadedModel, ids: list[int], prompt_len: int) -> torch.Tensor:
    """Each row's lens top-1 at every position that chose a written token, from one pass over the whole text with
    no cache: (L + 1, N) token ids, N = len(ids) - prompt_len; column i chose ids[prompt_len + i]."""
    # no cache; the head runs below, on the rows the lens needs
    _, states, _ = forward_hidden(lm, torch.tensor([ids], device=lm.device), None, 0)  # (1, T) in
    hidden = torch.stack([h[0, prompt_len - 1 : -1] for h in states])  # (L + 1, N, H)
    normed = torch.cat([final_norm(lm)(hidden[:-1]), hidden[-1:]])  # (L + 1, N, H), the last row normed already
    head = lm.model.get_output_embeddings()
    flat = normed.reshape(-1, normed.shape[-1])  # ((L + 1) N, H)
    rows = max(1, LOGITS_BYTES // (head.weight.shape[0] * head.weight.element_size()))
    tops = torch.cat([head(chunk).argmax(dim=-1) for chunk in flat.split(rows)])  # ((L + 1) N,)
    return tops.view(normed.shape[0], -1)  # (L + 1, N)


def run_agreement(lm: LoadedModel, ids: list[int], prompt_len: int) -> RunAgreement:
    """The lens agreement of a whole run (`ids`: its prompt, then the tokens it wrote), from one extra pass."""
    written = ids[prompt_len:]
    if prompt_len < 1 or not written:
        raise ValueError(f"no written token to compare: {len(written)} after a prompt of {prompt_len}; Step first")
    with Timer(lm.device) as t:
        tops = written_top1(lm, ids, prompt_len)  # (L + 1, N)
        hits = tops == torch.tensor(written, device=tops.device)  # (L + 1, N)
        shares = [h / len(written) for h in hits.sum(dim=-1).tolist()]  # exact counts over steps, per row
    return RunAgreement(shares, len(written), t.ms, device=str(lm.device), model=lm.label, dtype=lm.dtype_name)
