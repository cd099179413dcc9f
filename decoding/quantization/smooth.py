"""SmoothQuant: move the activations' outliers into the weights before quantizing both to int8.

A few input channels of a linear carry values far larger than the rest (LLM.int8()'s outlier features), so one int8
scale for the whole activation tensor rounds the others to nothing. For a linear y = X·Wᵀ, any positive s per input
channel j gives the same product: y = (X·diag(1/s))·(W·diag(s))ᵀ. SmoothQuant picks s_j = max|X_j|^α / max|W_j|^(1-α)
(Xiao et al. 2022, https://arxiv.org/abs/2211.10438): the activations lose their peaks, the weights take some on,
and both quantize well. The 1/s is folded into whatever made X, so it costs nothing at run time: the RMSNorm weight
before q/k/v, gate/up and the LM head; v_proj's output rows before o_proj; up_proj's output rows before down_proj.
max|X_j| is measured once, on calibration.txt beside this file (not the held-out text the quality is scored on).
"""

import copy
from pathlib import Path

import torch

CALIBRATION = Path(__file__).with_name("calibration.txt")


@torch.inference_mode()
def activation_maxima(model: torch.nn.Module, ids: list[int], window: int = 512) -> dict[str, torch.Tensor]:
    """max|X_j| per input channel j of every nn.Linear in `model` (name -> (in,)), over `ids` in windows."""
    maxima: dict[str, torch.Tensor] = {}

    def hook(name):
        def record(_module, inputs, _output):
            peak = inputs[0].detach().abs().float().reshape(-1, inputs[0].shape[-1]).amax(dim=0)  # (in,)
            maxima[name] = peak if name not in maxima else torch.maximum(maxima[name], peak)

        return record

    linears = [(n, m) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    handles = [m.register_forward_hook(hook(n)) for n, m in linears]
    try:
        device = next(model.parameters()).device
        for start in range(0, len(ids), window):
            model(input_ids=torch.tensor([ids[start : start + window]], device=device), use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return maxima


def calibration_maxima(model: torch.nn.Module, tokenizer) -> dict[str, torch.Tensor]:
    ids = tokenizer(CALIBRATION.read_text(encoding="utf-8"), add_special_tokens=False)["input_ids"]
    return activation_maxima(model, ids)


def smoothing_scales(act_max: torch.Tensor, weights: list[torch.Tensor], alpha: float) -> torch.Tensor:
    """s_j = max|X_j|^α / max|W_j|^(1-α) per input channel (in,); `weights` share the input (out_i × in each)."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha (the share of the outliers moved into the weights) must be in 0..1; got {alpha}")
    w_max = torch.cat([w.detach().float() for w in weights]).abs().amax(dim=0)  # (in,)
    s = act_max.float().clamp(min=1e-5).pow(alpha) / w_max.clamp(min=1e-5).pow(1 - alpha)
    return s.clamp(min=1e-5)


@torch.no_grad()
def smooth_model(model: torch.nn.Module, maxima: dict[str, torch.Tensor], alpha: float) -> torch.nn.Module:
    """A copy of a llama-style `model` whose linears see smoothed inputs; in float32 it computes the same logits."""
    smoothed = copy.deepcopy(model)
    kv_heads = smoothed.config.num_key_value_heads
    for i, layer in enumerate(smoothed.model.layers):
        prefix = f"model.layers.{i}."
        attn, mlp = layer.self_attn, layer.mlp
        # the layers after a linear first: their scales divide its output rows, before its own columns are scaled
        _into_rows(attn.v_proj, attn.o_proj, maxima[prefix + "self_attn.o_proj"], alpha, kv_heads)
        _into_rows(mlp.up_proj, mlp.down_proj, maxima[prefix + "mlp.down_proj"], alpha)
        qkv, gate_up = (attn.q_proj, attn.k_proj, attn.v_proj), (mlp.gate_proj, mlp.up_proj)
        _into_norm(layer.input_layernorm, qkv, maxima[prefix + "self_attn.q_proj"], alpha)
        _into_norm(layer.post_attention_layernorm, gate_up, maxima[prefix + "mlp.gate_proj"], alpha)
    head = smoothed.get_output_embeddings()
    if head.weight is smoothed.get_input_embeddings().weight:  # tied: the head gets its own copy to scale
        head.weight = torch.nn.Parameter(head.weight.detach().clone(), requires_grad=False)
    _into_norm(smoothed.model.norm, (head,), maxima["lm_head"], alpha)
    return smoothed.eval()


def _into_norm(norm: torch.nn.Module, linears: tuple, act_max: torch.Tensor, alpha: float) -> None:
    """Fold 1/s into the RMSNorm weight that feeds `linears`, and s into their columns."""
    s = smoothing_scales(act_max, [lin.weight for lin in linears], alpha)  # (in,)
    norm.weight.div_(s.to(norm.weight.dtype))
    for lin in linears:
        lin.weight.mul_(s.to(lin.weight.dtype))


def _into_rows(before: torch.nn.Linear, after: torch.nn.Linear, act_max: torch.Tensor, alpha: float, heads: int = 1):
    """Fold 1/s into `before`'s output rows and s into `after`'s columns, where `after` reads `before`'s output.

    With grouped-query attention `before` (v_proj) has `heads` key-value heads and each feeds several of `after`'s
    (o_proj's) query heads, so the scale of a channel is shared across its group: the group's largest activation
    and weight decide it."""
    repeat = after.in_features // before.out_features
    groups = (heads, repeat, before.out_features // heads)  # o_proj's input channels, by the v_proj head they copy
    acts = act_max.float().reshape(groups).amax(dim=1).flatten()  # (before.out,)
    w_max = after.weight.detach().float().abs().amax(dim=0).reshape(groups).amax(dim=1).flatten()
    s = smoothing_scales(acts, [w_max[None]], alpha)  # (before.out,)
    before.weight.div_(s[:, None].to(before.weight.dtype))
    if before.bias is not None:
        before.bias.div_(s.to(before.bias.dtype))
    expanded = s.reshape(heads, 1, -1).expand(groups).flatten()  # (after.in,)
    after.weight.mul_(expanded.to(after.weight.dtype))
