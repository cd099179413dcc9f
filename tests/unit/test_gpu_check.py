"""The GPU check (bench/gpu_check.py), rehearsed on the CPU: its dry run finishes, writes every section's key (the
schema the GPU run writes too) and a summary naming the device, and passes every check a CPU can make; a section
that raises is recorded and the next one runs; the sections only a GPU runs in full run on the CPU's stand-ins."""

import json
import subprocess
import sys
import time
from dataclasses import replace

import pytest
import torch

from bench import gpu_check
from bench import gpu_check_right as right
from bench import gpu_check_speed as speed
from bench.gpu_check_plan import BUNDLED, DRY_PLAN, NO_CUDA, TIMED, VARIANTS, Context, guarded
from decoding.timing.regimes import BUNDLED_SHAPE

CUDA_ONLY = {name for name, _, cuda_only in gpu_check.SECTIONS if cuda_only}


@pytest.fixture(scope="module")
def dry(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_check")
    result = gpu_check.main(["--dry-run", "--out", str(out)])
    return out, result


def test_the_dry_run_writes_every_sections_key_and_a_summary_naming_the_device(dry):
    out, result = dry
    written = json.loads((out / "gpu_check.json").read_text())
    assert written == json.loads(json.dumps(result, default=str))  # the file is the run's last word
    assert list(written) == ["check", *gpu_check.NAMES] and written["check"]["finished"]
    assert {name: written[name] for name in CUDA_ONLY} == {
        n: {"status": "skipped", "skipped": NO_CUDA} for n in CUDA_ONLY
    }
    assert {written[name]["status"] for name in gpu_check.NAMES if name not in CUDA_ONLY} == {"done"}
    # every model is a key, run or not: the GPU run's JSON has the same shape
    for name in ("layers", "fidelity"):
        assert set(VARIANTS) <= set(written[name])
    assert set(written["timings"]) == {*TIMED, "table", "status", "seconds"}
    summary = (out / "gpu_check.md").read_text()
    assert summary.startswith(f"# GPU check: {written['check']['device_name']}") and "dry run on the CPU" in summary
    assert "**Failed checks:** none" in summary


def test_the_dry_run_passes_the_checks_a_cpu_can_make(dry):
    _, result = dry
    checks = dict(gpu_check._checks({name: result[name] for name in gpu_check.NAMES}))
    assert checks and not [name for name, ok in checks.items() if ok is False]
    tiny = result["fidelity"]["tiny/float32"]
    assert tiny["checks"] == {
        "addresses fixed (prefill, replays, Back, forced pass)": True,
        "captured logits equal uncaptured (torch.equal)": True,
        "Back replays the same logits": True,
        "greedy tokens equal the eager path's": True,
    }
    # the CPU's stand-in: 64 replays, then one after Back and a forced pass
    assert tiny["captured"] is False and tiny["steps_equal"] == tiny["steps"] == 65
    assert all(result["layers"][v]["checks"] == {"every layer a plain StaticLayer": True} for v in VARIANTS)
    timed = result["timings"][f"{TIMED[-1]}"]["contexts"]
    assert set(timed) == {"17", "700"} and all(t["captured"] == {"skipped": NO_CUDA} for t in timed.values())
    assert all(t[path]["median_ms"] > 0 for t in timed.values() for path in ("eager", "static"))
    assert {p["path"] for p in result["regime_map"]["points"]} == {"eager", "static"}


def _section(name):
    def fn(ctx):
        return {"checks": {f"{name} ran": True}}

    return fn


def test_a_section_that_raises_is_recorded_and_the_next_one_runs(tmp_path, monkeypatch):
    def broken(ctx):
        raise RuntimeError("CUDA error: no kernel image is available for execution on the device")

    def sees_itself_running(ctx):  # the files are written before each section: a kill leaves its name
        return {"seen": json.loads((tmp_path / "gpu_check.json").read_text())["c"]["status"]}

    def one_path_breaks(ctx):  # inside a section, one model's (or path's) failure keeps the others' results
        return {"eager": {"median_ms": 1.0}, "captured": guarded(broken, ctx)}

    sections = (("a", broken, False), ("b", one_path_breaks, False), ("c", sees_itself_running, False))
    monkeypatch.setattr(gpu_check, "SECTIONS", sections)
    monkeypatch.setattr(gpu_check, "NAMES", ("a", "b", "c"))
    ctx = Context(torch.device("cpu"), DRY_PLAN, time.monotonic() + 60, dry_run=True)
    meta = {"dry_run": True, "device": "cpu", "device_name": "a CPU", "commit": "x", "started_utc": "now"}
    result = gpu_check.run(ctx, meta | {"time_limit_s": 60, "finished": False}, tmp_path, time.monotonic())
    assert result["a"]["status"] == "failed" and result["a"]["error"]["type"] == "RuntimeError"
    assert "no kernel image" in result["a"]["error"]["message"] and "broken" in result["a"]["error"]["traceback"]
    assert result["b"]["status"] == "done" and result["b"]["eager"] == {"median_ms": 1.0}
    assert result["b"]["captured"]["error"]["type"] == "RuntimeError" and result["c"]["seen"] == "running"
    summary = (tmp_path / "gpu_check.md").read_text()
    assert "| a | failed: RuntimeError |" in summary and "| b | done |" in summary
    assert "- b · captured · raised RuntimeError: CUDA error: no kernel image" in summary  # under the failed checks


def test_no_section_starts_past_the_time_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_check, "SECTIONS", (("a", _section("a"), False),))
    monkeypatch.setattr(gpu_check, "NAMES", ("a",))
    ctx = Context(torch.device("cpu"), DRY_PLAN, time.monotonic() - 1, dry_run=True)
    meta = {"dry_run": True, "device": "cpu", "device_name": "a CPU", "commit": "x", "started_utc": "now"}
    result = gpu_check.run(ctx, meta | {"time_limit_s": 10, "finished": False}, tmp_path, time.monotonic())
    assert result["a"] == {"status": "skipped", "skipped": "time limit reached before it started"}
    with pytest.raises(ValueError, match="--time-limit is in seconds, 10 to 3600, got 5"):
        gpu_check.main(["--out", str(tmp_path), "--time-limit", "5"])


def test_the_runner_starts_without_transformers_so_a_broken_one_is_each_sections_recorded_error():
    # on the GPU machine transformers is a carried wheel: if it fails to import, `environment` still writes the
    # machine and the versions down, and each section that needs it records the ImportError
    code = "import sys; import bench.gpu_check; print(sorted(m for m in sys.modules if m.startswith('transformers')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=gpu_check.ROOT)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
    assert BUNDLED_SHAPE.name == BUNDLED  # written out there, so the plan need not import the regime map


def test_the_sections_a_gpu_runs_in_full_run_on_the_cpus_stand_ins():
    # what only the GPU run reaches (the profiler, the allocator, a capture beside a thread) must not fail there on
    # a mistake a CPU can find: run on the tiny model, uncaptured, with the CPU's profiler
    plan = replace(DRY_PLAN, timed=("tiny/float32",), contexts=(17, 40), threads_variant="tiny/float32")
    ctx = Context(torch.device("cpu"), plan, time.monotonic() + 120)
    pool, launches = right.pool(ctx)["tiny/float32"], speed.launches(ctx)["tiny/float32"]
    attention, threads = speed.attention(ctx)["tiny/float32"], right.threads(ctx)
    assert pool["captured"]["pool_bytes"] == 0 and pool["captured"]["kv_cache_bytes"] > 0
    assert launches["paths"]["eager"] == {"counted": 0, "kernels_run": 0, "runtime_calls": {}}  # a CPU launches none
    assert set(attention["steps"]) == {"eager@17", "static@17", "eager@40", "static@40"}
    assert all(any("scaled_dot_product" in op for op in s["sdpa_ops"]) for s in attention["steps"].values())
    for mode in ("thread_local", "global"):
        assert [c["raised"] for c in threads[mode]["captures"]] == [None] * 3
        assert threads[mode]["other_thread_raised"] == []
        assert threads[mode]["captured_equals_uncaptured"] is True
