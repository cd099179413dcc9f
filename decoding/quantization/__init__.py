"""Quantization: fewer bytes per weight, a slightly different next-token distribution.

formats (what each format stores), quantizers (round-to-nearest, pure functions on weight tensors), linear (the
module that runs a format: a real kernel or "simulated": rounded weights, float compute), model (quantize a copy
of a model; bytes per decode step), compare (KL, Δp, same top-1 as pure functions of logits), quality (perplexity,
KL and top-1 agreement over the held-out text bundled beside this file).
"""
