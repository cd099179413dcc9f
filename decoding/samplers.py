"""The samplers, as pure functions on a `(V,)` or `(B, V)` float tensor of logits.

Penalties and temperature return new logits; filters return a boolean keep-mask (True = kept).
None of them changes its input: the lab shows the logits before and after each one.
Each agrees exactly with the transformers class named in its docstring, ties and -inf included.
This module reads no stage: a stage's range is checked where the pipeline runs the stage
(`decoding.pipeline.apply_stage`), as transformers checks a processor's value in its `__init__`, before its math.
"""

import math

import torch

NEG_INF = float("-inf")


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _rows(logits: torch.Tensor) -> torch.Tensor:
    # every filter works on rows; (V,) -> (1, V)
    return logits.unsqueeze(0) if logits.dim() == 1 else logits


def _like(mask: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    return mask.squeeze(0) if logits.dim() == 1 else mask


def _id_rows(prev_ids, logits: torch.Tensor) -> torch.Tensor:
    ids = torch.as_tensor(prev_ids, dtype=torch.long, device=logits.device)
    return ids.reshape(1, -1) if ids.dim() == 1 else ids  # (B, L)


def apply_repetition_penalty(logits: torch.Tensor, prev_ids, penalty: float) -> torch.Tensor:
    """CTRL's rule (arXiv:1909.05858): logits of seen tokens are divided by `penalty` if positive,
    multiplied if negative. `prev_ids` are prompt and generated ids. = RepetitionPenaltyLogitsProcessor."""
    ids = _id_rows(prev_ids, logits)
    if penalty == 1.0 or ids.numel() == 0:
        return logits.clone()
    rows = _rows(logits)
    seen = torch.gather(rows, 1, ids)
    seen = torch.where(seen < 0, seen * penalty, seen / penalty)
    return _like(rows.scatter(1, ids, seen), logits)


def apply_frequency_penalty(logits: torch.Tensor, prev_ids, frequency: float) -> torch.Tensor:
    """OpenAI's frequency penalty: logit -= frequency * count, where count is how often the token was generated so
    far (the prompt does not count)."""
    ids = _id_rows(prev_ids, logits)
    if frequency == 0 or ids.numel() == 0:
        return logits.clone()
    rows = _rows(logits)
    return _like(rows - frequency * _counts(rows, ids), logits)


def apply_presence_penalty(logits: torch.Tensor, prev_ids, presence: float) -> torch.Tensor:
    """OpenAI's presence penalty: logit -= presence once for every token generated so far, however often."""
    ids = _id_rows(prev_ids, logits)
    if presence == 0 or ids.numel() == 0:
        return logits.clone()
    rows = _rows(logits)
    return _like(rows - presence * (_counts(rows, ids) > 0).to(rows.dtype), logits)


def _counts(rows: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(rows).scatter_add_(1, ids, torch.ones_like(ids, dtype=rows.dtype))  # (B, V)


def apply_temperature(logits: torch.Tensor, t: float) -> torch.Tensor:
    """Divide by t: t < 1 sharpens, t > 1 flattens. t = 0 is greedy and never reaches this
    function (selection takes the argmax). = TemperatureLogitsWarper."""
    if not (_finite(t) and t > 0):
        raise ValueError(f"temperature must be a finite number > 0 here (0 means greedy: argmax), got {t!r}")
    return logits / t


def top_k_mask(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k highest logits (and every token tied with the k-th). k = 0 keeps all. = TopKLogitsWarper."""
    if k == 0:
        return torch.ones_like(logits, dtype=torch.bool)
    rows = _rows(logits)
    kth = torch.topk(rows, min(k, rows.shape[-1]))[0][..., -1, None]
    return _like(~(rows < kth), logits)


def top_p_mask(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Nucleus (arXiv:1904.09751): keep the smallest set of most probable tokens whose mass reaches p.
    p = 1 keeps all. = TopPLogitsWarper."""
    if p == 1.0:
        return torch.ones_like(logits, dtype=torch.bool)
    rows = _rows(logits)
    # ascending sort: drop the low tail whose mass stays within 1 - p, never the last (most probable)
    sorted_logits, order = torch.sort(rows, descending=False)
    tail = sorted_logits.softmax(dim=-1).cumsum(dim=-1) <= (1 - p)
    tail[..., -1:] = False
    return _like(~tail.scatter(1, order, tail), logits)


def min_p_mask(logits: torch.Tensor, min_p: float) -> torch.Tensor:
    """Min-p (arXiv:2407.01082): keep tokens with probability >= min_p x the top probability.
    min_p = 0 keeps all. = MinPLogitsWarper."""
    if min_p == 0:
        return torch.ones_like(logits, dtype=torch.bool)
    probs = torch.softmax(_rows(logits), dim=-1)
    remove = probs < min_p * probs.amax(dim=-1, keepdim=True)
    remove.scatter_(-1, torch.topk(probs, 1, dim=-1).indices, False)
    return _like(~remove, logits)


def typical_mask(logits: torch.Tensor, mass: float) -> torch.Tensor:
    """Locally typical sampling (arXiv:2202.00666): keep tokens whose surprise is closest to the
    entropy until their mass reaches `mass`. 1 keeps all. = TypicalLogitsWarper."""
    if mass == 1.0:
        return torch.ones_like(logits, dtype=torch.bool)
    rows = _rows(logits)
    logp = torch.nn.functional.log_softmax(rows, dim=-1)
    entropy = -(logp * torch.exp(logp)).nansum(-1, keepdim=True)
    shifted, order = torch.sort(torch.abs(-logp - entropy), descending=False)
    cumulative = rows.gather(-1, order).softmax(dim=-1).cumsum(dim=-1)
    last = (cumulative < mass).sum(dim=1).clamp_(max=shifted.shape[-1] - 1)
    remove = shifted > shifted.gather(1, last.view(-1, 1))
    remove[..., :1] = False
    return _like(~remove.scatter(1, order, remove), logits)


def epsilon_mask(logits: torch.Tensor, epsilon: float) -> torch.Tensor:
    """Epsilon sampling (arXiv:2210.15191): drop tokens with probability below epsilon, never the top one.
    0 keeps all. = EpsilonLogitsWarper."""
    if epsilon == 0:
        return torch.ones_like(logits, dtype=torch.bool)
    rows = _rows(logits)
    return _like(~((rows.softmax(dim=-1) < epsilon) & _below_top(rows)), logits)


def eta_mask(logits: torch.Tensor, eta: float) -> torch.Tensor:
    """Eta sampling (arXiv:2210.15191): like epsilon, with the cut-off min(eta, sqrt(eta) * exp(-entropy)).
    0 keeps all. = EtaLogitsWarper."""
    if eta == 0:
        return torch.ones_like(logits, dtype=torch.bool)
    rows = _rows(logits)
    eps = torch.tensor(float(eta), device=rows.device)
    entropy = torch.distributions.Categorical(logits=rows).entropy()
    cut = torch.min(eps, torch.sqrt(eps) * torch.exp(-entropy))[..., None]
    return _like(~((rows.softmax(dim=-1) < cut) & _below_top(rows)), logits)


def _below_top(rows: torch.Tensor) -> torch.Tensor:
    return rows < torch.topk(rows, 1)[0][..., -1, None]


def apply_mask(logits: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Blank out (set to -inf) what a filter removed; a new tensor."""
    return logits.masked_fill(~keep, NEG_INF)
