"""The GPU check's sections on whether the captured step is right and safe: the cache's layers, the captured step
beside the uncaptured and eager ones, the graph's memory, and a capture beside another thread's CUDA work.
bench/gpu_check.py runs them; bench/gpu_check_plan.py says what each returns.
"""

import threading
import time
from collections import Counter

import torch

from bench.gpu_check_plan import PROMPT, VARIANTS, Context, error_of, per_variant, prompt_ids
from decoding.clock import sync
from decoding.forward import forward_one, kv_cache_bytes
from decoding.models import LoadedModel
from decoding.static import StaticStep, can_capture, check_capturable
from decoding.timing.regimes import BUNDLED_SHAPE

# 2) the cache's layers -------------------------------------------------------------------------------------------


def layers(ctx: Context) -> dict:
    """Every variant's static cache, built from its config as the static step builds it: each layer's class, and
    whether the capture accepts it (decoding.static.check_capturable)."""
    return per_variant(ctx, VARIANTS, VARIANTS, lambda name: _layers_of(ctx, name))


def _layers_of(ctx: Context, variant: str) -> dict:
    from transformers import StaticCache

    config = ctx.model(variant).model.config if variant.startswith("tiny") else BUNDLED_SHAPE.config()
    cache = StaticCache(config=config, max_cache_len=32)
    refused = None
    try:
        check_capturable(cache)
    except ValueError as exc:
        refused = str(exc)
    classes = Counter(f"{type(x).__module__}.{type(x).__name__}" for x in cache.layers)
    return {"layers": dict(classes), "refused": refused, "checks": {"every layer a plain StaticLayer": refused is None}}


# 3) the captured step against the uncaptured one and the eager path ----------------------------------------------


def fidelity(ctx: Context) -> dict:
    return per_variant(ctx, VARIANTS, ctx.plan.variants, lambda name: _fidelity_of(ctx, ctx.model(name)))


def _fidelity_of(ctx: Context, lm: LoadedModel) -> dict:
    """The captured step (uncaptured on a CPU) beside an uncaptured one fed the same tokens: logits compared step by
    step, addresses read at every stage (prefill, replays, Back, a forced pass, one more replay); then its first
    greedy tokens beside the eager (dynamic-cache) path's."""
    plan, prompt = ctx.plan, prompt_ids(lm, PROMPT)
    room = PROMPT + plan.replays + plan.forced + 1
    graph, plain = StaticStep(lm, room, capture=can_capture(lm.device)), StaticStep(lm, room, capture=False)
    seen = {"start": graph.addresses()}
    a, b = graph.feed(prompt, 0), plain.feed(prompt, 0)
    seen["prefill"] = graph.addresses()
    tokens, logits, equal = [], [], []
    for _ in range(plan.replays):
        tokens.append(int(a.argmax()))
        a, b = graph.feed(tokens[-1:], graph.length), plain.feed(tokens[-1:], plain.length)  # (V,) each
        logits.append(a)
        equal.append((torch.equal(a, b), float((a - b).abs().max())))
    seen["replays"] = graph.addresses()
    # Back: the cache's length moves back; the step at that position again must give what it gave
    for step in (graph, plain):
        step.rewind(step.length - plan.back)
    again = graph.feed([tokens[-plan.back]], graph.length)
    plain.feed([tokens[-plan.back]], plain.length)
    seen["back"] = graph.addresses()
    for step in (graph, plain):  # forced tokens: one eager pass on the same cache
        step.feed(prompt_ids(lm, plan.forced), step.length)
    seen["forced"] = graph.addresses()
    a, b = graph.feed([tokens[0]], graph.length), plain.feed([tokens[0]], plain.length)
    seen["after"] = graph.addresses()
    equal.append((torch.equal(a, b), float((a - b).abs().max())))
    moved = [stage for stage, where in seen.items() if where != seen["start"]]
    eager = _beside_eager(lm, prompt, tokens[: plan.greedy], logits)
    exact = lm.dtype == torch.float32  # bfloat16's are recorded, not checked
    return {
        "captured": graph.captured,
        "dtype": lm.dtype_name,
        "steps_equal": sum(same for same, _ in equal),
        "steps": len(equal),
        "max_abs_diff": max(diff for _, diff in equal),
        "moved_at": moved,
        **eager,
        "checks": {
            "addresses fixed (prefill, replays, Back, forced pass)": not moved,
            "captured logits equal uncaptured (torch.equal)": all(same for same, _ in equal) if exact else None,
            "Back replays the same logits": torch.equal(again, logits[-plan.back]) if exact else None,
            "greedy tokens equal the eager path's": eager["first_difference"] is None if exact else None,
        },
    }


def _beside_eager(lm: LoadedModel, prompt: list[int], tokens: list[int], logits: list[torch.Tensor]) -> dict:
    """The eager (dynamic-cache) path's greedy tokens beside `tokens` and its logits beside `logits` while the tokens
    agree; `min_margin`, the smallest gap between the top logit and the next lower one: a difference at a near-tie
    is rounding. (Random weights tiled from one block repeat the head's rows: exact ties, the same on every path.)"""
    out, cache = forward_one(lm, prompt, None, 0)
    eager, diff, margin = [], 0.0, float("inf")
    for i in range(len(tokens)):
        eager.append(int(out.argmax()))
        top = out.max()
        margin = min(margin, float(top - out[out < top].max()))
        out, cache = forward_one(lm, eager[-1:], cache, len(prompt) + i)
        if eager == tokens[: i + 1]:
            diff = max(diff, float((out - logits[i]).abs().max()))
    first = next((i for i, (x, y) in enumerate(zip(tokens, eager)) if x != y), None)
    return {"tokens": tokens, "eager_tokens": eager, "first_difference": first, "eager_max_abs_diff": diff} | {
        "min_margin": margin
    }


# 4) the graph's own memory ---------------------------------------------------------------------------------------


def pool(ctx: Context) -> dict:
    return per_variant(ctx, VARIANTS, ctx.plan.variants, lambda name: _pool_of(ctx.model(name)))


def _pool_of(lm: LoadedModel) -> dict:
    """The allocator's counters around an uncaptured static step and a captured one of the same size: the graph's
    share is their difference, beside what the step measured of its pool (StaticStep.pool_bytes)."""
    room = PROMPT + 64
    counted = {}
    for captured in (False, True):
        before = _allocator(lm.device)
        step = StaticStep(lm, room, capture=captured and can_capture(lm.device))
        after = _allocator(lm.device)
        counted["captured" if captured else "uncaptured"] = {
            "allocated_delta": after[0] - before[0],
            "reserved_delta": after[1] - before[1],
            "kv_cache_bytes": kv_cache_bytes(step.cache),
            "pool_bytes": step.pool_bytes,
        }
        del step
    graph_share = counted["captured"]["reserved_delta"] - counted["uncaptured"]["reserved_delta"]
    measured = counted["captured"]["pool_bytes"] > 0 if can_capture(lm.device) else None
    return counted | {"graph_reserved_share": graph_share, "checks": {"the pool is measured (> 0)": measured}}


def _allocator(device: torch.device) -> tuple[int, int]:
    """The CUDA allocator's bytes allocated and reserved, the device synchronised first; (0, 0) elsewhere."""
    sync(device)
    if device.type != "cuda":
        return 0, 0
    return torch.cuda.memory_allocated(device), torch.cuda.memory_reserved(device)


# 9) a capture beside another thread's CUDA work -------------------------------------------------------------------


def threads(ctx: Context) -> dict:
    """For each capture error mode: capture while another thread runs eager passes on the same model (as a side
    panel would), then compare the captured step with an uncaptured one. Run last: a failed capture in "global" mode
    may leave the CUDA context unusable."""
    lm = ctx.model(ctx.plan.threads_variant)
    return {mode: _capture_beside_a_thread(lm, mode) for mode in ("thread_local", "global")}


CAPTURES = 3  # captures per mode, while the other thread runs: more chances that its work lands inside one


def _capture_beside_a_thread(lm: LoadedModel, mode: str) -> dict:
    stop, passes, other_errors = threading.Event(), [0], []

    def eager_passes():
        try:
            while not stop.is_set():
                _, cache = forward_one(lm, prompt_ids(lm, 48), None, 0)  # a new cache each time: allocations
                forward_one(lm, [5], cache, 48)
                passes[0] += 1
        except Exception as exc:
            other_errors.append(error_of(exc))

    other = threading.Thread(target=eager_passes, daemon=True)
    other.start()
    while passes[0] < 1 and other.is_alive():
        time.sleep(0.001)
    captures, graph = [], None
    for _ in range(CAPTURES):
        before, raised = passes[0], None
        try:
            graph = StaticStep(lm, PROMPT + 9, capture=can_capture(lm.device), error_mode=mode)  # a CPU: uncaptured
        except Exception as exc:
            graph, raised = None, error_of(exc)
        # > 0: the other thread's passes ran while the step was being captured
        captures.append({"raised": raised, "other_passes_during": passes[0] - before})
        if raised:
            break
    stop.set()
    other.join(timeout=60)
    out = {"captured": graph is not None and graph.captured, "captures": captures, "other_thread_raised": other_errors}
    out["cuda_usable_after"] = _cuda_usable(lm.device)
    if graph is not None and out["cuda_usable_after"] is True:  # compared after the other thread has stopped
        out["captured_equals_uncaptured"] = _same_steps(lm, graph, 8)
    checks = {"no error in either thread": not any(c["raised"] for c in captures) and not other_errors}
    checks["captured logits equal uncaptured"] = out.get("captured_equals_uncaptured", False)
    if mode == "global":  # torch's default: recorded to compare, not required to pass
        checks = {name: None for name in checks}
    return out | {"checks": checks}


def _cuda_usable(device: torch.device) -> bool | dict:
    try:
        return float(torch.ones(4, device=device).sum()) == 4.0
    except Exception as exc:
        return {"error": error_of(exc)}


def _same_steps(lm: LoadedModel, graph: StaticStep, n: int) -> bool:
    plain, prompt = StaticStep(lm, graph.max_len, capture=False), prompt_ids(lm, PROMPT)
    a, b = graph.feed(prompt, 0), plain.feed(prompt, 0)
    same = torch.equal(a, b)
    for _ in range(n):
        token = int(a.argmax())
        a, b = graph.feed([token], graph.length), plain.feed([token], plain.length)
        same = same and torch.equal(a, b)
    return same
