"""The roofline arithmetic: why prefill is compute-bound and decode is memory-bandwidth-bound.

A forward pass does FLOPs and reads bytes. Its arithmetic intensity (FLOPs per byte read) decides
which limit it hits first: below the ridge point (peak FLOP/s ÷ bandwidth) the memory system sets
the pace, above it the arithmetic units do. One decode step reads every weight once to produce one
token per sequence (≈ 2 FLOPs per parameter), so at batch 1 in fp16 it does about 1 FLOP per byte;
prefill reuses each weight for every prompt token, so its intensity grows with the prompt.
Roofline model: Williams, Waterman & Patterson 2009, https://doi.org/10.1145/1498765.1498785

Pure arithmetic on plain numbers (no torch): the lab's measurements and the calculator both use it.
"""

import math

GB = 1e9  # decimal gigabytes, as GPU data sheets and the references quote them


def _positive(name: str, value: float) -> float:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def weight_bytes(params: float, bytes_per_param: float) -> float:
    """Bytes one decode step reads for the weights: every parameter once."""
    return _positive("params", params) * _positive("bytes_per_param", bytes_per_param)


def attention_flops(layers: int, attn_dim: int, context: int) -> float:
    """FLOPs of attention for one new token over `context` cached tokens: q·kᵀ and p·v, 2 FLOPs per MAC."""
    return 4.0 * layers * attn_dim * context


def decode_flops(params: float, batch: int = 1, layers: int = 0, attn_dim: int = 0, context: int = 0) -> float:
    """FLOPs of one decode step for `batch` sequences: ≈ 2 × params per token, plus attention."""
    return batch * (2.0 * params + attention_flops(layers, attn_dim, context))


def prefill_flops(body_params: float, tokens: int, head_params: float = 0, layers: int = 0, attn_dim: int = 0) -> float:
    """FLOPs of prefilling `tokens`: every token goes through the body; the LM head runs on the last one
    only (logits_to_keep=1); causal attention sees on average (tokens + 1) / 2 positions."""
    mean_context = (tokens + 1) / 2
    return 2.0 * body_params * tokens + 2.0 * head_params + tokens * attention_flops(layers, attn_dim, mean_context)


def arithmetic_intensity(flops: float, bytes_moved: float) -> float:
    """FLOPs per byte read from memory."""
    return flops / _positive("bytes_moved", bytes_moved)


def ridge_point(peak_flops: float, bandwidth: float) -> float:
    """The intensity (FLOPs/byte) where the bandwidth slope meets the compute ceiling (both per second)."""
    return _positive("peak_flops", peak_flops) / _positive("bandwidth", bandwidth)


def attainable_flops(intensity: float, peak_flops: float, bandwidth: float) -> float:
    """The roofline itself: min(peak, bandwidth × intensity), in FLOP/s."""
    return min(peak_flops, bandwidth * intensity)


def floor_ms(bytes_per_step: float, bandwidth_gbs: float) -> float:
    """The fastest a step can be if it only had to read `bytes_per_step` at full bandwidth."""
    return _positive("bytes_per_step", bytes_per_step) / (_positive("bandwidth_gbs", bandwidth_gbs) * GB) * 1e3


def mbu(bytes_per_step: float, step_ms: float, bandwidth_gbs: float) -> float:
    """Model bandwidth utilisation: achieved bytes/s ÷ the machine's bandwidth (0..1, can exceed 1 with caches)."""
    return floor_ms(bytes_per_step, bandwidth_gbs) / _positive("step_ms", step_ms)


def mfu(flops: float, step_ms: float, peak_tflops: float) -> float:
    """Model FLOP utilisation: achieved FLOP/s ÷ the machine's peak FLOP/s."""
    return flops / (_positive("step_ms", step_ms) / 1e3) / (_positive("peak_tflops", peak_tflops) * 1e12)


def kv_bytes_per_sequence(layers: int, kv_heads: int, head_dim: int, tokens: int, bytes_per_value: float) -> float:
    """2 (K and V) × layers × KV heads × head dim × tokens × bytes."""
    for name, value in (("layers", layers), ("kv_heads", kv_heads), ("head_dim", head_dim), ("tokens", tokens)):
        _positive(name, value)
    return 2.0 * layers * kv_heads * head_dim * tokens * _positive("bytes_per_value", bytes_per_value)


def sequences_that_fit(memory_bytes: float, weights: float, kv_per_sequence: float, overhead_bytes: float = 0) -> int:
    """How many sequences' KV caches fit in the memory left beside the weights and fixed overhead (≥ 0)."""
    free = memory_bytes - weights - overhead_bytes
    return max(0, math.floor(free / _positive("kv_per_sequence", kv_per_sequence)))


# --- the measured numbers, read through the formulas above (m: decoding.timing.sweeps.Measurements) ---


def kv_bytes_for(shape, tokens: int) -> float:
    """`kv_bytes_per_sequence` for a measured ModelShape."""
    return kv_bytes_per_sequence(shape.layers, shape.kv_heads, shape.head_dim, max(tokens, 1), shape.bytes_per_param)


def _point(phase: str, x: int, ms: float, flops: float, moved: float) -> dict:
    per_s = flops / ms * 1e3
    intensity = arithmetic_intensity(flops, moved)
    return dict(phase=phase, x=x, ms=ms, flops=flops, bytes=moved, intensity=intensity, flops_per_s=per_s)


def decode_point(shape, batch: int, context: int, ms: float) -> dict:
    """One decode step for `batch` sequences at `context`: it reads the weights once and each sequence's cache."""
    flops = decode_flops(shape.params_read, batch, shape.layers, shape.attn_dim, context)
    return _point("decode", batch, ms, flops, shape.weight_bytes + batch * kv_bytes_for(shape, context))


def prefill_point(shape, tokens: int, ms: float) -> dict:
    """Prefilling `tokens`: reads the weights once, writes the cache for every token."""
    flops = prefill_flops(shape.body_params, tokens, shape.head_params, shape.layers, shape.attn_dim)
    return _point("prefill", tokens, ms, flops, shape.weight_bytes + kv_bytes_for(shape, tokens))


def roofline_points(m) -> list[dict]:
    """Prefill at each prompt length and decode at each batch size, placed on the roofline."""
    points = [prefill_point(m.shape, s.x, s.median_ms) for s in m.prefill]
    return points + [decode_point(m.shape, s.x, m.batch_context + 1, s.median_ms) for s in m.batch]


def time_per_output_token(ttft_ms: float, e2e_ms: float, output_tokens: int) -> float:
    """TPOT as vLLM's benchmarks and the references define it: the mean time per output token after the
    first, (end-to-end - TTFT) / (N - 1). NaN until there are two output tokens."""
    if output_tokens < 2:
        return float("nan")
    return (e2e_ms - ttft_ms) / (output_tokens - 1)


def request_numbers(loop) -> dict:
    """TTFT, time per output token, end-to-end and decode's share of it, for one measured request."""
    prefill, decode = loop.ms[0], loop.ms[1:]
    total = prefill + sum(decode)
    return dict(
        prompt_tokens=loop.context[0],
        output_tokens=len(loop.ms),
        ttft_ms=prefill,
        tpot_ms=time_per_output_token(prefill, total, len(loop.ms)),
        e2e_ms=total,
        decode_share=sum(decode) / total,
    )


def summary(m) -> dict:
    """The headline numbers of a measurement, as the bench script prints them (missing parts are left out)."""
    shape = m.shape
    out = dict(device=m.device_name, device_type=m.device, dtype=m.dtype, model=m.model, plan=m.plan)
    out |= dict(weight_bytes=shape.weight_bytes, params_read=shape.params_read, seconds=m.seconds)
    out["cancelled"] = m.cancelled
    if not (m.bandwidth and m.peak):
        return out
    bandwidth, peak = m.bandwidth.value, m.peak.value
    out |= dict(bandwidth_gbs=bandwidth, floor_ms=floor_ms(shape.weight_bytes, bandwidth), peak_tflops=peak)
    out["ridge_flops_per_byte"] = ridge_point(peak * 1e12, bandwidth * GB)
    if m.prefill:
        p = prefill_point(shape, m.prefill[-1].x, m.prefill[-1].median_ms)
        out |= dict(prefill_tokens=p["x"], prefill_ms=p["ms"], prefill_tokens_per_s=p["x"] / p["ms"] * 1e3)
        out |= dict(prefill_intensity=p["intensity"], prefill_mfu=mfu(p["flops"], p["ms"], peak))
    if m.decode:
        d = decode_point(shape, 1, m.decode[0].x, m.decode[0].median_ms)
        out |= dict(decode_context=m.decode[0].x, decode_ms=d["ms"], decode_intensity=d["intensity"])
        out |= dict(mbu=mbu(d["bytes"], d["ms"], bandwidth), decode_mfu=mfu(d["flops"], d["ms"], peak))
    if m.request:
        out["request"] = request_numbers(m.request)
    return out


def estimate_request(prefill: list[tuple[int, float]], decode: list[tuple[int, float]], prompt: int, out: int) -> dict:
    """TTFT, end-to-end and decode share for a `prompt`-token request with `out` output tokens, read off
    measured curves (tokens, median ms) by interpolation on log-log axes: one prefill, then out - 1 steps."""
    if not prefill or not decode or prompt < 1 or out < 1:
        raise ValueError(f"need measured prefill and decode curves and prompt, out >= 1; got {prompt=}, {out=}")

    def at(curve, x):
        xs, ms = zip(*sorted(curve))
        return math.exp(_interp(math.log(x), [math.log(v) for v in xs], [math.log(v) for v in ms]))

    ttft = at(prefill, prompt)
    steps = [at(decode, prompt + i) for i in range(1, out)]
    total = ttft + sum(steps)
    return dict(prompt_tokens=prompt, output_tokens=out, ttft_ms=ttft, e2e_ms=total, decode_share=sum(steps) / total)


def _interp(x: float, xs: list[float], ys: list[float]) -> float:
    """Piecewise-linear, extended flat beyond the ends (numpy.interp without numpy)."""
    if x <= xs[0]:
        return ys[0]
    for x0, x1, y0, y1 in zip(xs, xs[1:], ys, ys[1:]):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return ys[-1]
