"""Round-to-nearest quantizers: pure functions from a float weight matrix (out × in) to integers and scales.

Each returns new tensors and leaves its input alone. `w ≈ dequantize(...)`; the error of each value is at most
half a step (scale / 2), which is what the tests check.
"""

import torch


def int8_per_channel(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8, one scale per output row: w ≈ q * scale[:, None], q in -127..127."""
    scale = (w.abs().amax(dim=1) / 127).clamp(min=1e-12)  # (N,)
    q = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8)  # (N, K)
    return q, scale.float()


def int8_dequantize(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return q.float() * scale[:, None]  # (N, K)


def int8_groups(w: torch.Tensor, group: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8, one scale per group of `group` inputs (Q8_0's grid with group 32): w ≈ q * scale."""
    n, k = w.shape
    if k % group:
        raise ValueError(f"group size {group} must divide the input size {k}; for 576 use 32 or 64")
    wg = w.reshape(n, k // group, group)  # (N, G, g)
    scale = (wg.abs().amax(dim=-1) / 127).clamp(min=1e-12)  # (N, G)
    q = torch.round(wg / scale[..., None]).clamp(-127, 127).to(torch.int8)
    return q.reshape(n, k), scale.float()


def int8_groups_dequantize(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    n, k = q.shape
    return (q.reshape(n, scale.shape[1], -1).float() * scale[..., None]).reshape(n, k)


def int4_groups(w: torch.Tensor, group: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Asymmetric int4 per group of `group` inputs (Q4_1's grid): w ≈ q * scale + low, q in 0..15."""
    n, k = w.shape
    if k % group:
        raise ValueError(f"group size {group} must divide the input size {k}; for 576 use 32 or 64")
    wg = w.reshape(n, k // group, group)  # (N, G, g)
    low, high = wg.amin(dim=-1), wg.amax(dim=-1)  # (N, G)
    scale = ((high - low) / 15).clamp(min=1e-12)
    q = torch.round((wg - low[..., None]) / scale[..., None]).clamp(0, 15).to(torch.uint8)  # (N, G, g)
    return q.reshape(n, k), scale.float(), low.float()


def int4_dequantize(q: torch.Tensor, scale: torch.Tensor, low: torch.Tensor) -> torch.Tensor:
    n, k = q.shape
    groups = scale.shape[1]
    wg = q.reshape(n, groups, k // groups).float() * scale[..., None] + low[..., None]  # (N, G, g)
    return wg.reshape(n, k)


def rounded(w: torch.Tensor, fmt) -> torch.Tensor:
    """The float weights a format really holds: quantize, then dequantize (what a simulated run computes with)."""
    if fmt.weight_bits == 32:
        return w.clone()
    if fmt.weight_bits == 16:
        return w.to(torch.bfloat16).float()
    if fmt.weight_bits == 8 and fmt.group:
        return int8_groups_dequantize(*int8_groups(w, fmt.group))
    if fmt.weight_bits == 8:
        return int8_dequantize(*int8_per_channel(w))
    return int4_dequantize(*int4_groups(w, fmt.group))
