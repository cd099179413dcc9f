"""The accept/reject rule keeps the target's distribution: many seeded draws through it reproduce p after the
sampler pipeline, within a total-variation bound suited to the number of draws; a wrong rule fails the same check."""

import math

import torch

from decoding.pipeline import SamplerSettings, process
from decoding.speculative.accept import accept_greedy, accept_sampled, leviathan, residual_of

DRAWS = 20_000
V = 8
# the expected total variation of an empirical distribution over V outcomes from N draws is below
# 0.5 * sqrt(V / N) (= 0.01 here); three times that leaves the check failing by chance almost never
TV_BOUND = 1.5 * math.sqrt(V / DRAWS)


def target_after_pipeline() -> torch.Tensor:
    """A hand-made context's p: raw logits through penalties, temperature and top-k, in transformers' order."""
    logits = torch.tensor([2.0, 1.5, 1.2, 0.3, 0.0, -0.5, -1.0, -3.0])
    settings = SamplerSettings(temperature=0.8, top_k=5, repetition_penalty=1.3)
    return process(logits, settings, [0, 3], [3]).probs_after  # tokens 0 and 3 were seen: penalised


def draft_q() -> torch.Tensor:
    """A draft that disagrees: too sure of token 1, and gives mass to a token the target's top-k removed (7)."""
    return torch.tensor([0.05, 0.5, 0.1, 0.05, 0.05, 0.05, 0.05, 0.15])


def first_tokens(p, q, rule, draws=DRAWS, seed=0) -> torch.Tensor:
    """Draft x ~ q, then the rule (and the residual at a rejection): the empirical distribution of the first token."""
    gen = torch.Generator().manual_seed(seed)
    counts = torch.zeros(V)
    pp = torch.stack([p, p])  # (K + 1 = 2, V): the bonus position is never reached in what we count
    for _ in range(draws):
        x = int(torch.multinomial(q, 1, generator=gen)) if q is not None else 1
        d = accept_sampled(pp, None if q is None else q[None, :], [x], gen, rule)
        counts[x if d.accepted == 1 else d.bonus] += 1
    return counts / draws


def tv(a, b) -> float:
    return 0.5 * float((a - b).abs().sum())


def test_leviathan_rule_reproduces_the_pipelines_distribution():
    p = target_after_pipeline()
    assert tv(first_tokens(p, draft_q(), leviathan), p) < TV_BOUND


def test_accepting_whenever_q_exceeds_p_fails_the_same_check():
    p = target_after_pipeline()
    # the rule a learner might guess: keep the guess whenever the draft was more confident than the target
    broken = lambda p_x, q_x, u: q_x > p_x  # noqa: E731
    assert tv(first_tokens(p, draft_q(), broken), p) > TV_BOUND


def test_a_certain_draft_is_kept_with_probability_p_and_the_rest_comes_from_p_without_it():
    p = target_after_pipeline()
    # prompt lookup proposes token 1 with certainty (q one-hot): the emitted token is still distributed as p
    assert tv(first_tokens(p, None, leviathan), p) < TV_BOUND


def test_a_token_the_pipeline_removed_is_never_accepted():
    p = target_after_pipeline()
    assert float(p[7]) == 0.0
    gen = torch.Generator().manual_seed(1)
    for _ in range(200):
        d = accept_sampled(torch.stack([p, p]), draft_q()[None, :], [7], gen)
        assert d.accepted == 0 and d.bonus != 7


def test_residual_is_p_minus_q_clipped_at_zero_and_renormalised():
    p, q = torch.tensor([0.5, 0.3, 0.2]), torch.tensor([0.2, 0.6, 0.2])
    assert torch.allclose(residual_of(p, q, 1), torch.tensor([1.0, 0.0, 0.0]))
    assert torch.allclose(residual_of(p, None, 0), torch.tensor([0.0, 0.6, 0.4]))


def test_greedy_keeps_drafts_while_they_equal_the_argmax_and_adds_the_next_argmax():
    p = torch.tensor([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1], [0.2, 0.2, 0.6], [0.0, 1.0, 0.0]])
    d = accept_greedy(p, [1, 0, 1])
    assert (d.accepted, d.bonus) == (2, 2)
    d = accept_greedy(p, [1, 0, 2])
    assert (d.accepted, d.bonus) == (3, 1)  # all kept: the bonus is the argmax after the last guess
    assert accept_greedy(p, []).bonus == 1  # no draft: one plain greedy step
