"""Which drafted tokens the target keeps.

p_i is the target's distribution at position i (the verify pass's logits through the sampler pipeline, with the
context up to that position: prompt, generated text and the drafted tokens before it); q_i the draft's.
- Greedy: keep drafted tokens while each equals the target's argmax; then add the target's argmax after them.
  The text is exactly greedy decoding's: every kept token is the one greedy would have chosen.
- Sampling (Leviathan et al., algorithm 1): keep x_i when a uniform u < min(1, p_i(x_i) / q_i(x_i)). At the first
  rejection, draw from the residual max(0, p_i - q_i), renormalised; if all K are kept, draw a bonus token from
  p_K. Each emitted token is then distributed exactly as p, whatever q is: accepting gives min(p, q), the residual
  adds back p - min(p, q). With prompt lookup q is one-hot: keep x with probability p(x), else draw from p
  without x, renormalised.
Paper: Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative Decoding", arXiv:2211.17192.
"""

from dataclasses import dataclass

import torch


@dataclass
class Decision:
    accepted: int  # n: drafted tokens kept
    bonus: int  # the token added after them
    bonus_from: str  # "argmax", "target" (p after all K were kept) or "residual"
    uniforms: list[float]  # one per drafted token checked (sampling)
    residual: torch.Tensor | None = None  # (V,) the renormalised residual at the rejection


def accept_greedy(p: torch.Tensor, drafted: list[int]) -> Decision:
    """p: (K + 1, V) the target's final logits or probabilities per position."""
    best = torch.argmax(p, dim=-1).tolist()  # (K + 1,)
    n = 0
    while n < len(drafted) and drafted[n] == best[n]:
        n += 1
    return Decision(n, best[n], "argmax", [])


def leviathan(p_x: float, q_x: float, u: float) -> bool:
    """Keep the drafted token with probability min(1, p/q). `u < ratio` (not <=) so that a token the pipeline
    removed (p = 0) is never kept, even if the uniform comes out exactly 0."""
    return u < p_x / q_x


def accept_sampled(p: torch.Tensor, q: torch.Tensor | None, drafted: list[int], generator, rule=leviathan) -> Decision:
    """p: (K + 1, V) target probabilities; q: (K, V) draft probabilities, or None for a certain (one-hot) draft.
    `rule(p_x, q_x, u)` decides each token: the tests swap in a wrong rule to show the check catches it."""
    uniforms = []
    for i, x in enumerate(drafted):
        p_x, q_x = float(p[i, x]), 1.0 if q is None else float(q[i, x])
        u = float(torch.rand((), generator=generator, device=p.device))
        uniforms.append(u)
        if rule(p_x, q_x, u):
            continue
        residual = residual_of(p[i], None if q is None else q[i], x)
        token = int(torch.multinomial(residual, 1, generator=generator))
        return Decision(accepted=i, bonus=token, bonus_from="residual", uniforms=uniforms, residual=residual)
    token = int(torch.multinomial(p[len(drafted)], 1, generator=generator))
    return Decision(len(drafted), token, "target", uniforms)


def residual_of(p: torch.Tensor, q: torch.Tensor | None, drafted: int) -> torch.Tensor:
    """max(0, p - q), renormalised; for a one-hot q on `drafted`, p without `drafted`. (V,)"""
    if q is None:
        q = torch.zeros_like(p)
        q[drafted] = 1.0
    residual = torch.clamp(p - q, min=0.0)  # (V,)
    total = float(residual.sum())
    # a rejection means p(x) < q(x), so the residual holds mass q(x) - p(x) > 0; guard against rounding only
    return residual / total if total > torch.finfo(p.dtype).tiny else p
