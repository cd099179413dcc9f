"""The GPU check's sections on what each path costs: step times, launches per step, the attention kernels chosen,
and the regime map. bench/gpu_check.py runs them; bench/gpu_check_plan.py says what each returns.
"""

import time
from dataclasses import asdict
from statistics import median

from bench.gpu_check_plan import NO_CUDA, PROMPT, TIMED, Context, Plan, guarded, per_variant, prompt_ids, sdpa_enabled
from decoding.clock import sync
from decoding.models import LoadedModel
from decoding.static import StaticStep, can_capture
from decoding.timing import regimes
from decoding.timing.launches import attention_kernels, kernels, launch_count, profiled, runtime_calls, sdpa_ops
from decoding.timing.limits import repeat_timed
from decoding.timing.regimes import PATHS, path_step
from decoding.watch import Watch

# 5) the time per step on each path -------------------------------------------------------------------------------


def timings(ctx: Context) -> dict:
    out = per_variant(ctx, TIMED, ctx.plan.timed, lambda name: _timings_of(ctx, ctx.model(name)))
    rows = []
    for name, timed in out.items():
        for context, paths in timed.get("contexts", {}).items():
            ms = {path: paths[path].get("median_ms") for path in PATHS}  # None where skipped or failed
            rows.append({"model": name, "context": context} | {f"{p} ms": _round(v) for p, v in ms.items()})
            rows[-1] |= {"eager/static": _ratio(ms["eager"], ms["static"])}
            rows[-1] |= {"static/captured": _ratio(ms["static"], ms["captured"])}
            rows[-1] |= {"capture ms": _round(timed["build_ms"].get("capture_ms"))}
    return out | {"table": rows}


def _timings_of(ctx: Context, lm: LoadedModel) -> dict:
    """Per context: `repeats` steps on each path after `warmup` (CUDA events on a GPU, a synchronised perf_counter
    on a CPU), the median and the raw times; then what building a captured step costs beyond an uncaptured one."""
    plan, contexts = ctx.plan, {}
    for context in plan.contexts:
        prompt, room = prompt_ids(lm, context), plan.warmup + plan.repeats + 1
        contexts[str(context)] = {}
        for path in PATHS:
            if path == "captured" and not can_capture(lm.device):
                contexts[str(context)][path] = {"skipped": NO_CUDA}
                continue
            contexts[str(context)][path] = guarded(_timed, lm, path, prompt, room, plan)
    return {"contexts": contexts, "build_ms": guarded(_build_ms, lm, PROMPT + plan.repeats)}


def _timed(lm: LoadedModel, path: str, prompt: list[int], room: int, plan: Plan) -> dict:
    one = path_step(lm, path, prompt, room)
    ms = repeat_timed(lm.device, one, plan.repeats, plan.warmup, Watch())
    return {"median_ms": median(ms), "min_ms": min(ms), "ms": ms}


def _build_ms(lm: LoadedModel, room: int) -> dict:
    """Wall time to build a static step uncaptured and captured (warm-up passes and the recording): the device
    synchronised before each clock read."""
    built = {}
    for captured in (False, True) if can_capture(lm.device) else (False,):
        sync(lm.device)
        start = time.perf_counter()
        StaticStep(lm, room, capture=captured)
        sync(lm.device)
        built["captured" if captured else "uncaptured"] = (time.perf_counter() - start) * 1e3
    if "captured" in built:
        built["capture_ms"] = built["captured"] - built["uncaptured"]
    return built


def _round(ms: float | None) -> float | None:
    return None if ms is None else round(ms, 3)


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if not a or not b else round(a / b, 2)


# 6) launches per step --------------------------------------------------------------------------------------------


def launches(ctx: Context) -> dict:
    out = per_variant(ctx, TIMED, ctx.plan.timed, lambda name: _launches_of(ctx, ctx.model(name)))
    rows = [
        {"model": name, "path": path, "counted": seen.get("counted"), "kernels run": seen.get("kernels_run")}
        for name, paths in out.items()
        for path, seen in paths.get("paths", {}).items()
    ]
    return out | {"table": rows}


def _launches_of(ctx: Context, lm: LoadedModel) -> dict:
    """One step on each path under the profiler, after its warm-up: the launches counted by LAUNCH_CALLS's names,
    every runtime call seen by name, and how many kernels the device ran."""
    paths = {}
    for path in PATHS:
        if path == "captured" and not can_capture(lm.device):
            continue
        paths[path] = guarded(_launched, lm, path, ctx.plan)
    checks = {"LAUNCH_CALLS names what this torch records (eager counted > 0)": paths["eager"].get("counted", 0) > 0}
    if "captured" in paths:
        checks["a replay is one launch (one cudaGraphLaunch)"] = paths["captured"].get("counted") == 1
    return {"paths": paths, "checks": checks}


def _launched(lm: LoadedModel, path: str, plan: Plan) -> dict:
    one = path_step(lm, path, prompt_ids(lm, plan.contexts[0]), plan.warmup + 1)
    for _ in range(plan.warmup):
        one()
    events = profiled(lm.device, one)
    return {
        "counted": launch_count(events),
        "kernels_run": sum(k["count"] for k in kernels(events, top=100_000)),
        "runtime_calls": runtime_calls(events),
    }


# 7) the attention kernels chosen ---------------------------------------------------------------------------------


def attention(ctx: Context) -> dict:
    out = per_variant(ctx, TIMED, ctx.plan.timed, lambda name: _attention_of(ctx, ctx.model(name)))
    return out | {"sdpa_enabled": sdpa_enabled()}


def _attention_of(ctx: Context, lm: LoadedModel) -> dict:
    """One eager and one static step at each context under the profiler: the SDPA operator dispatched (it names the
    backend), the kernels that look like attention, softmax or matrix products, the longest kernels, and the device
    time of them all."""
    seen = {
        f"{path}@{context}": guarded(_kernels_of, lm, path, context, ctx.plan)
        for context in ctx.plan.contexts
        for path in ("eager", "static")
    }
    return {"attn_implementation": getattr(lm.model.config, "_attn_implementation", None), "steps": seen}


def _kernels_of(lm: LoadedModel, path: str, context: int, plan: Plan) -> dict:
    one = path_step(lm, path, prompt_ids(lm, context), plan.warmup + 1)
    for _ in range(plan.warmup):
        one()
    events = profiled(lm.device, one)
    ran = kernels(events, top=100_000)
    return {
        "sdpa_ops": sdpa_ops(events),
        "attention_kernels": attention_kernels(events),
        "top_kernels": ran[:12],
        "device_us": round(sum(k["us"] for k in ran), 1),
    }


# 8) the regime map -----------------------------------------------------------------------------------------------


def regime_map(ctx: Context) -> dict:
    """The regime map (decoding.timing.regimes) over the plan's sizes, every path this device has, stopped at the
    deadline (what was timed kept)."""
    plan = ctx.plan
    watch = Watch(should_stop=lambda: ctx.out_of_time)
    m = regimes.regime_map(
        ctx.device.type, plan.regime_dtype, plan.regime_steps, plan.regime_warmup, sizes=plan.regime_sizes, watch=watch
    )
    rows = [
        {"size": p.size, "path": p.path, "ms": round(p.decode_ms_per_token, 3), "MBU": round(p.mbu, 3)}
        | {"launches": p.launches_per_step, "GB": round(p.weight_bytes / 1e9, 2)}
        for p in m.points
    ]
    data = asdict(m)
    data["map_seconds"] = data.pop("seconds")  # the section's own `seconds` and `skipped` are the runner's
    data["sizes_left_out"] = data.pop("skipped")
    return data | {"table": rows}
