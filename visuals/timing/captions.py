"""The sentences of the "Prefill vs decode" tab: the headline over its charts and one or two plain sentences under
each, every number read off this measurement (`decoding.timing.sweeps.Measurements`). No torch here: the physics
(FLOPs, bytes, floors) comes from `decoding.timing.roofline`, which is plain arithmetic."""

from __future__ import annotations

from typing import TYPE_CHECKING

from decoding.timing import roofline as rl
from visuals.glossary import model_label, term
from visuals.machine import device_html, machine_gbs, machine_gflops, measured_when

if TYPE_CHECKING:
    from decoding.timing.sweeps import Measurements


def headline(m: Measurements) -> str:
    s = rl.summary(m)
    if "bandwidth_gbs" not in s:
        return f"*Cancelled after {m.seconds:.0f} s, before the machine's limits were measured.*"
    parts = [
        f"**{device_html(m.device_name)}**, {m.dtype}, {model_label(m.model_label)}: "
        f"measured in {m.seconds:.0f} s ({m.plan} plan" + (", cancelled" if m.cancelled else "") + ").",
        # one line at 1280x720 in projector mode, so the roofline below still shares the screen with Measure
        f"Memory bandwidth **{machine_gbs(s['bandwidth_gbs'])}** · {term('matmul')} peak "
        f"**{machine_gflops(s['peak_tflops'])}** "
        f"({_limits_from(m)}) · weights read per decode step **{s['weight_bytes'] / 1e6:.0f} MB** · "
        f"floor **{s['floor_ms']:.1f} ms/token**",
    ]
    if "decode_ms" in s:
        parts[-1] += f" · measured **{s['decode_ms']:.1f} ms/token** · {term('MBU')} **{s['mbu']:.0%}**"
    return "\n\n".join(parts)


def captions(m: Measurements) -> tuple[str, str, str, str, str]:
    """One or two plain sentences under each chart, computed from this measurement."""
    s, out = rl.summary(m), []
    if "decode_ms" in s and m.batch:
        big = rl.decode_point(m.shape, m.batch[-1].x, m.batch_context + 1, m.batch[-1].median_ms)
        intensity, ridge = s["decode_intensity"], s["ridge_flops_per_byte"]
        # the roofline's verdict follows from the two measured limits and the step's shape, not from how busy the
        # machine was: the share of bandwidth reached (MBU) is reported beside it, as measured
        verdict = (
            f"{ridge / intensity:.0f}× below this machine's ridge point of {ridge:.1f} FLOPs/byte: it waits on memory"
            if intensity < ridge
            else f"above this machine's ridge point of {ridge:.1f} FLOPs/byte: its matmul units are the limit"
        )
        out.append(
            f"Decode at batch 1 did {intensity:.2f} FLOPs per byte, {verdict}. It ran at {s['mbu']:.0%} of the "
            f"memory bandwidth ({machine_gbs(s['bandwidth_gbs'])}) and {s['decode_mfu']:.1%} of the matmul peak. "
            f"At batch {big['x']} a step did "
            f"{big['intensity']:.1f} FLOPs/byte, and prefill of {s['prefill_tokens']} tokens "
            f"{s['prefill_intensity']:.0f} FLOPs/byte at {s['prefill_mfu']:.0%} of the matmul peak."
        )
    else:
        out.append("")
    if "prefill_ms" in s and "decode_ms" in s:
        per_token = s["prefill_ms"] / s["prefill_tokens"]
        first, last = m.decode[0], m.decode[-1]
        kv_mb = rl.kv_bytes_for(m.shape, last.x) / 1e6
        out.append(
            f"Prefill of {s['prefill_tokens']} tokens took {s['prefill_ms']:.0f} ms, {per_token:.1f} ms per token, "
            f"while one decode step took {s['decode_ms']:.1f} ms for a single token: "
            f"{s['decode_ms'] / per_token:.0f}× slower per token. A decode step took {first.median_ms:.0f} ms with "
            f"{first.x} tokens of context and {last.median_ms:.0f} ms with {last.x}: at {last.x} tokens the cache adds "
            f"{kv_mb:.0f} MB to the {m.shape.weight_bytes / 1e6:.0f} MB of weights every step reads."
        )
    else:
        out.append("")
    if m.naive and m.cached:
        naive_s, cached_s = sum(m.naive.ms) / 1e3, sum(m.cached.ms) / 1e3
        same = (
            "Both loops chose the same tokens."
            if m.naive.ids == m.cached.ids
            else ("The two loops' tokens differ somewhere: the same maths in a different order rounds differently.")
        )
        out.append(
            f"Generating {len(m.naive.ms)} tokens took {naive_s:.1f} s re-running the whole sequence each step and "
            f"{cached_s:.1f} s with the KV cache ({naive_s / cached_s:.1f}× faster). The naive step grows with the "
            f"sequence ({m.naive.ms[1]:.0f} → {m.naive.ms[-1]:.0f} ms), so its total grows quadratically. {same}"
        )
    else:
        out.append("")
    if len(m.batch) > 1:
        one, big = m.batch[0], m.batch[-1]
        out.append(
            f"One step for {big.x} sequences took {big.median_ms:.0f} ms against {one.median_ms:.0f} ms for one: "
            f"{big.median_ms / one.median_ms:.1f}× the time for {big.x}× the tokens, "
            f"{big.x / big.median_ms * 1e3:.0f} tokens/s instead of {1e3 / one.median_ms:.0f}."
        )
    else:
        out.append("")
    out.append(_request_caption(m))
    return tuple(out)


def _limits_from(m: Measurements) -> str:
    """Whence the two limits: this machine's figure (a copy and a matmul), probed now or kept on this server."""
    when = m.machine.when() if m.machine is not None else None
    return measured_when(when, m.machine_probed or m.machine is None)


def _request_caption(m: Measurements) -> str:
    if not m.request:
        return ""
    r = rl.request_numbers(m.request)
    text = (
        f"{term('TTFT', 'Time to first token')} {r['ttft_ms']:.0f} ms, {term('TPOT', 'time per output token')} "
        f"{_ms(r['tpot_ms'])}, end-to-end "
        f"{r['e2e_ms'] / 1e3:.2f} s for a {r['prompt_tokens']}-token prompt and {r['output_tokens']} output tokens: "
        f"decode was **{r['decode_share']:.0%}** of the wall time (the references quote ~97% on a mid-range GPU)."
    )
    if (r["prompt_tokens"], r["output_tokens"]) != (500, 200) and m.prefill and m.decode:
        est = rl.estimate_request(
            [(s.x, s.median_ms) for s in m.prefill], [(s.x, s.median_ms) for s in m.decode], 500, 200
        )
        text += (
            f" Scaled down to keep the measurement short; read off this machine's curves, a 500-token prompt with "
            f"200 output tokens would take ≈ {est['e2e_ms'] / 1e3:.1f} s, decode ≈ {est['decode_share']:.0%} of it."
        )
    return text


def _ms(value: float) -> str:
    """A time in ms, or — where there is none (a one-token request has no time per output token)."""
    return "—" if value != value else f"{value:.1f} ms"
