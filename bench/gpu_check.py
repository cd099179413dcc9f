"""The GPU check: is the captured static decode step right and safe on a GPU, and what does each path cost there.

    python3 bench/gpu_check.py --out DIR [--time-limit 450] [--dry-run]

Written for a machine lent for minutes, whose first run will most likely meet an environment problem: every section
runs whatever the one before did, one that raises records its exception (type, message, traceback) and the next
goes on, and both files are written again after each section, so a run killed at its limit still leaves what it did.
The sections, in order (what each returns: bench/gpu_check_plan.py; they are in bench/gpu_check_right.py and
bench/gpu_check_speed.py):
 1. environment: torch, CUDA, cuDNN, transformers and the other versions, the GPU and its memory;
 2. layers: every layer of each model's static cache a plain `StaticLayer` (the capture refuses any other);
 3. fidelity: the captured step beside an uncaptured one, 64 replays then Back and a forced pass, logits and tensor
    addresses compared; its greedy tokens beside the eager path's;
 4. pool: the memory a captured step's graph keeps (StaticStep.pool_bytes, and the allocator's counters);
 5. timings: eager, static and captured steps at contexts 17 and 700, bfloat16 and float32, and the capture's cost;
 6. launches: launches per step from torch.profiler on each path, and every runtime call seen by name;
 7. attention: the SDPA operator and kernels each dtype runs at each context (bfloat16's slowdown at long context);
 8. regime_map: decoding.timing.regimes from the bundled shape up to Llama-2-7B, on the three paths, bfloat16;
 9. threads: a capture while another thread runs eager passes, "thread_local" and "global" capture modes (last: a
    failed global capture may leave CUDA unusable).
Sections start only while time is left (`--time-limit`, checked between sections and inside the regime map); the
rest are marked skipped. Writes DIR/gpu_check.json (every section's key, always: a fixed schema) and
DIR/gpu_check.md (a summary that names the device), and prints the JSON as its last line.
`--dry-run`: the CPU, the tiny model, the bundled shape in float32 for the timings and the map, no capture and no
profiler sections (marked skipped), the same keys: a rehearsal in seconds. The recipe: docs/gpu-check.md.
"""

import argparse
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

import torch

from bench.gpu_check_plan import DRY_PLAN, GPU_PLAN, NO_CUDA, Context, error_of

ROOT = Path(__file__).resolve().parent.parent
# name, what runs it ("module:function", imported when the section starts: a transformers that fails to import is
# then each section's recorded error, not a run that dies before writing anything), whether it needs CUDA
SECTIONS = (
    ("environment", "bench.gpu_check_plan:environment", False),
    ("layers", "bench.gpu_check_right:layers", False),
    ("fidelity", "bench.gpu_check_right:fidelity", False),
    ("pool", "bench.gpu_check_right:pool", True),
    ("timings", "bench.gpu_check_speed:timings", False),
    ("launches", "bench.gpu_check_speed:launches", True),
    ("attention", "bench.gpu_check_speed:attention", True),
    ("regime_map", "bench.gpu_check_speed:regime_map", False),
    ("threads", "bench.gpu_check_right:threads", True),
)
NAMES = tuple(name for name, _, _ in SECTIONS)
JSON_NAME, MD_NAME = "gpu_check.json", "gpu_check.md"


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="the folder for gpu_check.json and gpu_check.md")
    parser.add_argument("--time-limit", type=float, default=450.0, help="seconds; no section starts after it")
    parser.add_argument("--dry-run", action="store_true", help="the CPU and the tiny model: a rehearsal")
    args = parser.parse_args(argv)
    if not 10 <= args.time_limit <= 3600:
        raise ValueError(f"--time-limit is in seconds, 10 to 3600, got {args.time_limit}")
    cuda = torch.cuda.is_available() and not args.dry_run
    device = torch.device("cuda" if cuda else "cpu")
    start = time.monotonic()
    ctx = Context(device, GPU_PLAN if cuda else DRY_PLAN, start + args.time_limit, dry_run=args.dry_run)
    meta = _meta(ctx, args, sys.argv[1:] if argv is None else list(argv))
    # a kill at the run's limit (SIGTERM) still writes the files, the section it stopped marked as running
    before = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        result = run(ctx, meta, args.out, start)
    finally:
        signal.signal(signal.SIGTERM, before)
    print(json.dumps(result, default=str))
    return result


def run(ctx: Context, meta: dict, out: Path, start: float) -> dict:
    """Every section in order, each timed and caught; both files written before the first and after each."""
    result = {"check": meta} | {name: {"status": "pending"} for name in NAMES}
    try:
        for name, fn, cuda_only in SECTIONS:
            result[name] = {"status": "running", "started_s": round(time.monotonic() - start, 1)}
            _write(out, result, start)
            result[name] = _section(ctx, name, fn, cuda_only)
        meta["finished"] = True
    finally:
        _write(out, result, start)
    return result


def _section(ctx: Context, name: str, target, cuda_only: bool) -> dict:
    """One section, timed and caught. `target`: "module:function", or the function itself."""
    if cuda_only and ctx.device.type != "cuda":
        return {"status": "skipped", "skipped": NO_CUDA if ctx.dry_run else "no CUDA here"}
    if ctx.out_of_time:
        return {"status": "skipped", "skipped": "time limit reached before it started"}
    if ctx.device.type != "cuda" and not ctx.dry_run and name != "environment":
        return {"status": "skipped", "skipped": "no CUDA here (torch.cuda.is_available() is False)"}
    print(f"[gpu_check] {name} ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    try:
        module, _, function = target.partition(":") if isinstance(target, str) else ("", "", "")
        fn = getattr(importlib.import_module(module), function) if module else target
        data, status = fn(ctx), "done"
    except Exception as exc:  # the next section goes on: one run should teach as much as it can
        data, status = {"error": error_of(exc)}, "failed"
    seconds = round(time.perf_counter() - started, 2)
    print(f"[gpu_check] {name} {status} in {seconds} s", file=sys.stderr, flush=True)
    return {"status": status} | data | {"seconds": seconds}


def _meta(ctx: Context, args, argv: list[str]) -> dict:
    from decoding.timing.limits import device_name

    try:
        name = device_name(ctx.device)
    except Exception as exc:  # a broken driver must not stop the run before it writes anything
        name = f"unknown ({type(exc).__name__}: {exc})"
    return {
        "dry_run": args.dry_run,
        "device": str(ctx.device),
        "device_name": name,
        "commit": _commit(),
        "started_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "time_limit_s": args.time_limit,
        "seconds": 0.0,
        "finished": False,
        "argv": argv,
    }


def _commit() -> str:
    """The checked-out commit, when the tree came with its git folder (a copy of the working tree may not)."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"


def _write(out: Path, result: dict, start: float) -> None:
    """Both files, each written whole then moved into place: a kill mid-write leaves the last complete one."""
    out.mkdir(parents=True, exist_ok=True)
    result["check"]["seconds"] = round(time.monotonic() - start, 1)
    for name, text in ((JSON_NAME, json.dumps(result, indent=1, default=str)), (MD_NAME, summary(result))):
        part = out / f".{name}.part"
        part.write_text(text)
        os.replace(part, out / name)


# the summary ------------------------------------------------------------------------------------------------------

MARK = {True: "✓", False: "✗", None: "·"}


def summary(result: dict) -> str:
    """The JSON as a page: what ran, which checks failed and what raised, then each section's checks, table and
    facts."""
    meta = result["check"]
    where = "dry run on the CPU" if meta["dry_run"] else meta["device"]
    ended = "finished" if meta["finished"] else "stopped before the end"
    lines = [
        f"# GPU check: {meta['device_name']}",
        "",
        f"{where} · commit {meta['commit']} · {meta['started_utc']} · {meta['seconds']:.0f} s of the "
        f"{meta['time_limit_s']:.0f} s limit, {ended}.",
        "",
        "| section | status | seconds | checks passed | failed | errors inside |",
        "|---|---|---:|---:|---:|---:|",
    ]
    failed = []
    for name in NAMES:
        data = result[name]
        checks, errors = list(_checks(data)), list(_errors(data))
        failed += [f"{name} raised {_said(data['error'])}"] if data.get("status") == "failed" else []
        failed += [f"{name} · {path}" for path, ok in checks if ok is False]
        failed += [f"{name} · {path}raised {_said(error)}" for path, error in errors]
        passed, bad = sum(ok is True for _, ok in checks), sum(ok is False for _, ok in checks)
        lines.append(f"| {name} | {_status(data)} | {data.get('seconds', '')} | {passed} | {bad} | {len(errors)} |")
    lines += ["", "**Failed checks:** " + ("none" if not failed else ""), *[f"- {f}" for f in failed], ""]
    for name in NAMES:
        lines += _section_md(name, result[name])
    return "\n".join(lines) + "\n"


def _status(data: dict) -> str:
    if data.get("status") == "skipped":
        return f"skipped: {data['skipped']}"
    if data.get("status") == "failed":
        return f"failed: {data['error']['type']}"
    return data.get("status", "")


def _checks(data, prefix: str = ""):
    """(where · name, True/False/None) for every `checks` dict in `data`, however deep."""
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        if key == "checks" and isinstance(value, dict):
            yield from ((f"{prefix}{name}", ok) for name, ok in value.items())
        elif isinstance(value, dict):
            yield from _checks(value, f"{prefix}{key} · ")


def _errors(data, prefix: str = ""):
    """(where · , the error) for every model, path or step inside a section that raised while the rest went on."""
    for key, value in data.items() if isinstance(data, dict) else ():
        if isinstance(value, dict) and isinstance(value.get("error"), dict) and "type" in value["error"]:
            yield f"{prefix}{key} · ", value["error"]
        elif isinstance(value, dict):
            yield from _errors(value, f"{prefix}{key} · ")


def _said(error: dict) -> str:
    return f"{error['type']}: {error['message'][:300]}"


def _section_md(name: str, data: dict) -> list[str]:
    lines = [f"## {name}", "", f"*{_status(data)}*", ""]
    if "error" in data:
        lines += [f"`{data['error']['type']}`: {data['error']['message']}", "", "```", data["error"]["traceback"]]
        lines += ["```", ""]
    lines += [f"- {MARK[ok]} {path}" for path, ok in _checks(data)]
    lines += [f"- ✗ {path}raised {_said(error)} (its traceback: in the JSON)" for path, error in _errors(data)]
    lines += _table(data.get("table") or [])
    for key, value in data.items():
        if key in ("status", "seconds", "error", "checks", "table", "skipped"):
            continue
        fact = _fact(value)
        if fact:
            lines.append(f"- {key}: {fact}")
    return lines + [""]


def _fact(value) -> str:
    """A value in one line: a scalar, a short list, a dict's scalars (a skipped or failed entry by why)."""
    if isinstance(value, dict):
        if "skipped" in value or "error" in value:
            return f"skipped: {value['skipped']}" if "skipped" in value else f"failed: {value['error']['message']}"
        parts = [f"{k}={_fact(v)}" for k, v in value.items() if not isinstance(v, dict | list) and k != "checks"]
        return ", ".join(parts)[:400]
    if isinstance(value, list):
        if len(value) > 8 or any(isinstance(v, dict | list) for v in value):
            return f"{len(value)} items (in the JSON)"
        return ", ".join(map(str, value))[:200]
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _table(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    heads = list(rows[0])
    lines = ["", "| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(_fact(row.get(h)) for h in heads) + " |" for row in rows]
    return lines + [""]


if __name__ == "__main__":
    main()
