"""What the fidelity tests compare against: transformers' own generate() for a prompt, settings and seed, and
the settings every such test runs."""

import torch

from decoding.pipeline import SamplerSettings

GREEDY = SamplerSettings(temperature=0)


# (settings, seed) pairs on the tiny model: greedy, plain sampling and every stage transformers has
FIDELITY = [
    (GREEDY, 0),
    (SamplerSettings(temperature=0, repetition_penalty=1.3), 0),
    (SamplerSettings(), 1),
    (SamplerSettings(temperature=0.7, top_k=10), 2),
    (SamplerSettings(top_p=0.8, repetition_penalty=1.2), 3),
    (SamplerSettings(temperature=1.3, min_p=0.1), 4),
    (SamplerSettings(typical_p=0.9), 5),
    (SamplerSettings(epsilon=0.003), 6),
    (SamplerSettings(eta=0.01), 7),
    (SamplerSettings(temperature=1.2, top_k=40, top_p=0.95, min_p=0.02, repetition_penalty=1.1), 8),
]


def generate_ids(lm, prompt, s: SamplerSettings, seed: int, max_new_tokens: int) -> list[int]:
    """What transformers' generate() produces for the same settings (its implicit top_k=50 switched off)."""
    kwargs = {"max_new_tokens": max_new_tokens, "repetition_penalty": s.repetition_penalty}
    if s.greedy:
        kwargs["do_sample"] = False
    else:
        kwargs.update(do_sample=True, temperature=s.temperature, top_k=s.top_k, top_p=s.top_p, typical_p=s.typical_p)
        kwargs.update(min_p=s.min_p or None, epsilon_cutoff=s.epsilon, eta_cutoff=s.eta)
    ids = torch.tensor([prompt.ids], device=lm.device)  # (1, T)
    torch.manual_seed(seed)
    out = lm.model.generate(ids, attention_mask=torch.ones_like(ids), **kwargs)  # (1, T + new)
    return out[0, len(prompt.ids) :].tolist()
