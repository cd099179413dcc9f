"""How far a format moves the next-token distribution: llama.cpp's --kl-divergence metrics, as pure functions.

All take logits (..., V) from the reference (float32) and from the format at the same positions, and change
neither. KL(reference || format) in nats: 0 for identical logits; Δp: the change in the probability of a given
token (the one the reference chose); same top-1: whether the two argmaxes agree.
"""

import torch


def kl_divergence(ref_logits: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """KL(p_ref || p) per position (...,), in nats, computed in float64."""
    return kl_of_log_probs(log_probs(ref_logits), log_probs(logits))


def log_probs(logits: torch.Tensor) -> torch.Tensor:
    """log softmax in float64 (..., V): what the KL and the perplexity are computed from."""
    return torch.log_softmax(logits.double(), dim=-1)


def kl_of_log_probs(log_p_ref: torch.Tensor, log_p: torch.Tensor) -> torch.Tensor:
    """KL(p_ref || p) per position (...,) from both log-probabilities (float64), for a reference compared with many."""
    return (log_p_ref.exp() * (log_p_ref - log_p)).sum(dim=-1).clamp(min=0.0)


def delta_p(ref_logits: torch.Tensor, logits: torch.Tensor, token: torch.Tensor) -> torch.Tensor:
    """p(token) under the format minus p(token) under the reference, per position (...,)."""
    index = token.unsqueeze(-1)  # (..., 1)
    p_ref = torch.softmax(ref_logits.double(), dim=-1).gather(-1, index).squeeze(-1)
    p = torch.softmax(logits.double(), dim=-1).gather(-1, index).squeeze(-1)
    return p - p_ref


def same_top1(ref_logits: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """True where both pick the same most likely token (...,)."""
    return ref_logits.argmax(dim=-1) == logits.argmax(dim=-1)
