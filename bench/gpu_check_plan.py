"""What the GPU check runs on and how much it does: the models it checks, its plan (the GPU's, or the dry run's), the
run's context (device, time left, models built once), and the machine's versions (the first section).

Every section (bench/gpu_check_right.py, bench/gpu_check_speed.py) takes the Context and returns a dict of plain
data: what it measured, `checks` (name: True passed, False failed, None recorded only) where it checks something, and
`table` (rows of plain values) where a table says it best in the summary. A section that covers several models
returns one entry per model name in VARIANTS or TIMED, always all of them (a fixed schema): a model the plan leaves
out is `{"skipped": why}`, and a model that fails is `{"error": ...}` while the others go on.
This module imports torch and nothing that imports transformers: a transformers that fails to import on the GPU
machine is then an error inside each section that needs it, recorded, after `environment` has written down the
machine and the versions.
"""

import importlib.util
import platform
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING

import torch

from decoding.timing.limits import device_name

if TYPE_CHECKING:
    from decoding.models import LoadedModel

BUNDLED = "SmolLM2-135M"  # decoding.timing.regimes.BUNDLED_SHAPE's name (imported there with transformers)
# the models checked: the tests' tiny llama, and the bundled model's shape with random weights in both dtypes
VARIANTS = ("tiny/float32", f"{BUNDLED}/bfloat16", f"{BUNDLED}/float32")
TIMED = VARIANTS[1:]  # the tiny model's times say nothing of a real model's
NO_CUDA = "dry run: no CUDA"
PROMPT = 16  # tokens before the checked steps


@dataclass(frozen=True)
class Plan:
    """How much each section does: the GPU's plan, or the dry run's (the CPU, in seconds)."""

    variants: tuple[str, ...] = VARIANTS  # checked for fidelity and memory
    timed: tuple[str, ...] = TIMED  # timed, profiled
    replays: int = 64  # captured steps checked one by one
    back: int = 5  # positions Back moves over after them
    forced: int = 3  # tokens fed together in one eager pass after that
    greedy: int = 32  # greedy tokens compared with the eager (dynamic-cache) path
    contexts: tuple[int, ...] = (17, 700)  # context lengths the steps are timed and profiled at
    repeats: int = 20  # timed steps per path and context
    warmup: int = 3  # steps run first and thrown away
    regime_dtype: str = "bfloat16"
    regime_sizes: tuple[str, ...] = ("SmolLM2-135M", "SmolLM2-360M", "SmolLM2-1.7B", "Llama-2-7B")
    regime_steps: int = 5
    regime_warmup: int = 2
    threads_variant: str = f"{BUNDLED}/float32"


GPU_PLAN = Plan()
DRY_PLAN = Plan(
    variants=("tiny/float32",),
    timed=(f"{BUNDLED}/float32",),
    repeats=3,
    warmup=1,
    regime_dtype="float32",
    regime_sizes=("SmolLM2-135M",),
    regime_steps=2,
    regime_warmup=1,
)


@dataclass
class Context:
    """What every section gets: the device, the plan, the time left, and the models built so far (built once)."""

    device: torch.device
    plan: Plan
    deadline: float  # time.monotonic() past which long sections stop early
    dry_run: bool = False
    models: dict[str, "LoadedModel"] = field(default_factory=dict)

    def model(self, variant: str) -> "LoadedModel":
        from decoding.models import TINY, load_model
        from decoding.timing.regimes import BUNDLED_SHAPE, random_model

        if variant not in self.models:
            name, dtype = variant.split("/")
            if name == "tiny":
                self.models[variant] = load_model(TINY, str(self.device), dtype)
            else:
                self.models[variant] = random_model(BUNDLED_SHAPE, self.device, getattr(torch, dtype))
        return self.models[variant]

    @property
    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline


def error_of(exc: BaseException) -> dict:
    """An exception as plain data: its type, message and the last frames of its traceback."""
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return {"type": type(exc).__name__, "message": str(exc)[:2000], "traceback": "".join(frames)[-3000:]}


def guarded(fn: Callable[..., dict], *args) -> dict:
    """`fn(*args)`, or `{"error": ...}` if it raised: one path's failure (a capture, say) keeps the others' results."""
    try:
        return fn(*args)
    except Exception as exc:
        return {"error": error_of(exc)}


def per_variant(ctx: Context, names: tuple[str, ...], chosen: tuple[str, ...], fn: Callable[[str], dict]) -> dict:
    """`fn(name)` for each chosen name, `{"skipped": why}` for the others, `{"error": ...}` for one that raised. Every
    name in `names` is a key (the schema); a chosen name beyond them (a rehearsal's tiny model) is added after."""
    out = {}
    for name in names + tuple(c for c in chosen if c not in names):
        if name not in chosen:
            out[name] = {"skipped": "dry run: not in the dry run's plan" if ctx.dry_run else "not in the plan"}
        elif ctx.out_of_time:
            out[name] = {"skipped": "time limit reached"}
        else:  # one model's failure must not hide the others'
            out[name] = guarded(fn, name)
    return out


def prompt_ids(lm: "LoadedModel", n: int) -> list[int]:
    return [(7919 * i) % lm.vocab_size for i in range(1, n + 1)]  # any ids do: the weights are random


# 1) the machine and the versions ---------------------------------------------------------------------------------


def environment(ctx: Context) -> dict:
    """The versions (read from the installed packages' metadata, so a package that fails to import still shows
    its version), the GPU, and whether transformers imports."""
    dev = ctx.device
    versions = {name: _version(name) for name in ("torch", "transformers", "tokenizers", "huggingface_hub")}
    versions |= {name: _version(name) for name in ("safetensors", "accelerate", "numpy", "regex", "tqdm")}
    cuda = dev.type == "cuda"
    props = torch.cuda.get_device_properties(dev) if cuda else None
    major, minor = (int(x) for x in (versions["transformers"] or "0.0").split(".")[:2])
    imports = guarded(_transformers_imports)
    return {
        "python": platform.python_version(),
        "versions": versions,
        "torch_cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "transformers_from": getattr(importlib.util.find_spec("transformers"), "origin", None),
        "transformers_import": imports,
        "device": str(dev),
        "device_name": device_name(dev),
        "memory_gib": round(props.total_memory / 2**30, 1) if cuda else None,
        "capability": f"{props.major}.{props.minor}" if cuda else None,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "sdpa_enabled": sdpa_enabled(),
        "checks": {
            "transformers >= 5.24 (cache=, out.cache, StaticLayer's device length)": (major, minor) >= (5, 24),
            "CUDA available": cuda or (None if ctx.dry_run else False),
            "transformers imports": "error" not in imports,
        },
    }


def _transformers_imports() -> dict:
    import transformers
    from transformers import StaticCache, StaticLayer  # noqa: F401  (what decoding.static needs of it)

    return {"imported": transformers.__version__}


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def sdpa_enabled() -> dict:
    """Which scaled-dot-product-attention backends torch may pick (its choice per call: the attention section)."""
    flags = ("flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled", "cudnn_sdp_enabled")
    return {
        f.removesuffix("_sdp_enabled"): getattr(torch.backends.cuda, f)()
        for f in flags
        if hasattr(torch.backends.cuda, f)
    }
