"""The regime map: decode time per token against the bytes of weights, for one model family at growing size.

A decode step reads every weight once. If the bytes set its time, ms per token grows with the weights along the
line bytes ÷ bandwidth; if something else does (Python and kernel launches on a GPU, at small sizes), the time
stays flat however few bytes there are, until the model is large enough for its bytes to dominate. Timing the same
step at growing sizes draws both regimes and where they meet.

The sizes are the bundled model's shape (SmolLM2-135M), then SmolLM2-360M- and 1.7B-shaped llamas, and on a GPU
larger Llama shapes up to what its memory holds. They are built with random weights, no download: a matrix-vector
product reads every weight and does the same arithmetic whatever the values, so it takes the same time (the
benchmark checks this on the bundled shape, real weights beside random ones: `real_vs_random`).

1) the machine's copy bandwidth (machine.probe, the one method every lesson reads; the server's kept figure when
   one is handed in);
2) per size: build it, prefill a short prompt, then time one-token decode steps on each path, a kind of pass in the
   words a run's steps are recorded in (decoding.passes.KINDS; warm-up excluded, the device synchronised before
   each clock read): "eager", the lab's step on a growing cache; "static", the static cache's step run as it is
   (decoding.static, any device); "captured", that step replayed as a CUDA graph (CUDA only). Eager to static is
   what the fixed cache and the device-built mask change; static to captured, what one launch for the whole step
   instead of one per kernel changes;
3) per size and path: ms per token (median of the raw times, kept), MBU against that bandwidth, kernel launches
   per step (counted by torch.profiler, CUDA only: decoding.timing.launches).
Arguments and result are plain values (no model, no tensor), so the work can run in a process of its own.
"""

import fcntl
import gc
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import median

import torch

from decoding.forward import forward_one
from decoding.models import LoadedModel, resolve_device, resolve_dtype
from decoding.passes import KINDS
from decoding.static import StaticStep, can_capture
from decoding.timing import roofline as rl
from decoding.timing.launches import launch_count, profiled
from decoding.timing.limits import device_name, repeat_timed
from decoding.timing.machine import MachineFigure, probe
from decoding.timing.shape import model_shape
from decoding.watch import Cancelled, Watch

PROMPT_TOKENS = 8  # the context the timed steps see: short, so the weights are nearly all a step reads
FILL_BLOCK = 1 << 20  # random values drawn once and tiled over every weight (drawing 1.7e9 takes ~20 s on 2 cores)
ALIKE = 0.15  # real and random weights "time alike" when their fastest steps are within 15% of each other
LAUNCHES_ON_CPU = "None on a CPU: its operators run in the calling thread, there is no kernel launch to count"


@dataclass(frozen=True)
class Size:
    """One model shape of the family (a Llama config): enough to build it, and to count its bytes before."""

    name: str
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    vocab: int
    tied: bool = True
    rope_theta: float = 10000.0
    gpu_only: bool = False

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def params_read(self) -> int:
        """What one decode step reads (decoding.timing.shape's count): the layers, the final norm, the LM head."""
        h, kv = self.hidden, self.kv_heads * self.head_dim
        per_layer = 2 * h * h + 2 * h * kv + 3 * h * self.intermediate + 2 * h  # q o, k v, mlp, two norms
        return self.layers * per_layer + h + self.vocab * h

    def held_bytes(self, bytes_per_param: int) -> int:
        """The weights in memory: what a step reads, plus an untied input embedding."""
        return (self.params_read + (0 if self.tied else self.vocab * self.hidden)) * bytes_per_param

    def config(self):
        from transformers import LlamaConfig

        return LlamaConfig(
            vocab_size=self.vocab,
            hidden_size=self.hidden,
            intermediate_size=self.intermediate,
            num_hidden_layers=self.layers,
            num_attention_heads=self.heads,
            num_key_value_heads=self.kv_heads,
            head_dim=self.head_dim,
            max_position_embeddings=4096,
            tie_word_embeddings=self.tied,
            rope_parameters={"rope_theta": self.rope_theta, "rope_type": "default"},
        )


# SmolLM2's published configs (the first is the bundled model's own: tests/test_regimes.py checks it), then Llama-2's
SIZES = (
    Size("SmolLM2-135M", 576, 1536, 30, 9, 3, 49152, rope_theta=100000.0),
    Size("SmolLM2-360M", 960, 2560, 32, 15, 5, 49152, rope_theta=100000.0),
    Size("SmolLM2-1.7B", 2048, 8192, 24, 32, 32, 49152, rope_theta=130000.0),
    Size("Llama-2-7B", 4096, 11008, 32, 32, 32, 32000, tied=False, gpu_only=True),
    Size("Llama-2-13B", 5120, 13824, 40, 40, 40, 32000, tied=False, gpu_only=True),
    Size("CodeLlama-34B", 8192, 22016, 48, 64, 8, 32000, tied=False, rope_theta=1e6, gpu_only=True),
)
BUNDLED_SHAPE = SIZES[0]
# every kind of pass a run takes (decoding.passes), timed on its one-token step: the growing cache's eager step; the
# static cache's step as it is; that step replayed as a graph
PATHS = KINDS


@dataclass(frozen=True)
class Point:
    """One size on one path: the raw step times and what they mean."""

    size: str
    path: str
    weights: str  # "random" (or "real", the bundled model's own)
    weight_bytes: int  # read per step
    params_read: int
    ms: list[float]  # raw per-step times, warm-up excluded
    decode_ms_per_token: float  # their median
    mbu: float  # bytes read per step (weights + KV cache) ÷ median time ÷ copy bandwidth
    launches_per_step: int | None
    device: str
    dtype: str


@dataclass
class RegimeMap:
    """Everything one regime map measured, as plain data."""

    device: str  # "cpu", "cuda"
    device_name: str
    dtype: str
    bandwidth_gbs: float = 0.0  # the machine's copy bandwidth (machine.MachineFigure), the MBUs are against it
    points: list[Point] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # sizes left out, and why
    launches_note: str = ""
    steps: int = 0
    context: int = PROMPT_TOKENS
    cancelled: bool = False
    seconds: float = 0.0
    machine: MachineFigure | None = None  # the figure `bandwidth_gbs` came from
    machine_probed: bool = False  # True: probed during this map; False: the server's kept figure, reused


def sizes_for(device: torch.device, bytes_per_param: int, free: int | None = None) -> tuple[list[Size], list[str]]:
    """The family's sizes this device runs (the larger Llama shapes on a GPU only) and fits (weights within 80% of
    the free memory, the rest for the cache, activations and a captured graph); the others, each with why."""
    free = free_bytes(device) if free is None else free
    chosen, skipped = [], []
    for size in SIZES:
        if size.gpu_only and device.type != "cuda":
            skipped.append(f"{size.name}: measured on a GPU only")
        elif size.held_bytes(bytes_per_param) > 0.8 * free:
            skipped.append(
                f"{size.name}: {size.held_bytes(bytes_per_param) / 1e9:.1f} GB of weights, {free / 1e9:.1f} GB free"
            )
        else:
            chosen.append(size)
    return chosen, skipped


def regime_map(
    device: str = "auto",
    dtype: str | None = None,
    steps: int = 3,
    warmup: int = 1,
    sizes: tuple[str, ...] | None = None,
    paths: tuple[str, ...] | None = None,
    watch: Watch | None = None,
    machine: MachineFigure | None = None,
) -> RegimeMap:
    """Time `steps` decode steps (after `warmup`) for each size that fits, on each path this device has (eager and
    static everywhere, captured on CUDA only). `sizes` picks some by name; `machine`: the server's kept figure of
    this machine and dtype, reused instead of probing again (None: probe it now). On cancel, returns what was
    measured so far."""
    dev, watch, start = resolve_device(device), watch or Watch(), time.perf_counter()
    dt = resolve_dtype(dtype, dev)
    paths = paths or tuple(p for p in PATHS if p != "captured" or can_capture(dev))
    if any(p not in PATHS for p in paths) or ("captured" in paths and not can_capture(dev)):
        raise ValueError(f"paths must be among {', '.join(PATHS)} (captured on CUDA only), got {paths!r}")
    out = RegimeMap(device=dev.type, device_name=device_name(dev), dtype=str(dt).removeprefix("torch."))
    out.steps, out.launches_note = steps, "" if dev.type == "cuda" else LAUNCHES_ON_CPU
    try:
        with one_per_machine(watch):  # the free memory is read once no other map on this machine builds its models
            chosen, out.skipped = sizes_for(dev, torch.empty((), dtype=dt).element_size())
            if sizes is not None:
                chosen = [s for s in chosen if s.name in sizes]
            watch.on_progress(0.0, "memory bandwidth")
            out.machine_probed = machine is None
            out.machine = probe(dev, dt, watch) if machine is None else machine
            out.bandwidth_gbs = out.machine.bandwidth_gbs
            for i, size in enumerate(chosen):
                watch.on_progress((i + 0.5) / (len(chosen) + 0.5), f"{size.name} shape, random weights")
                lm = random_model(size, dev, dt)
                out.points += [time_path(lm, size.name, p, steps, warmup, out.bandwidth_gbs, watch) for p in paths]
                del lm
                _free(dev)
            watch.on_progress(1.0, "done")
    except Cancelled:
        out.cancelled = True
    out.seconds = time.perf_counter() - start
    return out


# one regime map at a time on a machine, across its processes: each map builds models as large as 80% of the memory
# free as it starts (sizes_for), so two at once (two replicas of the lecture hall, two servers of a test run) each
# counted the same free memory and together asked for more than the machine has. A map that finds another under way
# waits for it, saying so, and can be cancelled while it waits
MACHINE_LOCK = Path(tempfile.gettempdir()) / "decoding-lab-regime-map.lock"
WAIT_POLL_S = 0.2


@contextmanager
def one_per_machine(watch: Watch) -> Iterator[None]:
    with open(MACHINE_LOCK, "a") as held:
        while True:
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                watch.on_progress(0.0, "waiting for another regime map on this machine to end (each needs its memory)")
                watch.check()
                time.sleep(WAIT_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


def with_machine(m: RegimeMap, machine: MachineFigure | None) -> RegimeMap:
    """The map against `machine`'s bandwidth (the server's figure, probed again since the map was timed): each MBU
    rescaled, bytes ÷ time ÷ bandwidth, the times as measured. The same map when there is no other figure."""
    if machine is None or not m.bandwidth_gbs or machine.bandwidth_gbs == m.bandwidth_gbs:
        return m
    scale = m.bandwidth_gbs / machine.bandwidth_gbs
    points = [replace(p, mbu=p.mbu * scale) for p in m.points]
    return replace(m, bandwidth_gbs=machine.bandwidth_gbs, machine=machine, points=points)


def time_path(
    lm: LoadedModel, name: str, path: str, steps: int, warmup: int, bandwidth_gbs: float, watch: Watch
) -> Point:
    """One size on one path: its step times, their median, MBU and launches, as a Point."""
    ms, launched = step_times(lm, path, steps, warmup, watch)
    shape, step_ms = model_shape(lm), median(ms)
    moved = rl.decode_point(shape, 1, PROMPT_TOKENS + warmup + steps // 2, step_ms)["bytes"]  # weights + KV cache
    return Point(
        size=name,
        path=path,
        weights="random" if lm.model_id.startswith("random:") else "real",
        weight_bytes=shape.weight_bytes,
        params_read=shape.params_read,
        ms=ms,
        decode_ms_per_token=step_ms,
        mbu=rl.mbu(moved, step_ms, bandwidth_gbs),
        launches_per_step=launched,
        device=str(lm.device),
        dtype=lm.dtype_name,
    )


def step_times(lm: LoadedModel, path: str, steps: int, warmup: int, watch: Watch) -> tuple[list[float], int | None]:
    """Prefill PROMPT_TOKENS, then time one-token steps on `path` (the context grows by one per step): the raw
    times in ms, warm-up excluded, and the launches of one more step."""
    prompt = [(7919 * i) % lm.vocab_size for i in range(1, PROMPT_TOKENS + 1)]  # any ids do
    one = path_step(lm, path, prompt, steps + warmup + 1)
    ms = repeat_timed(lm.device, one, steps, warmup, watch)
    return ms, launches(lm.device, one)


def path_step(lm: LoadedModel, path: str, prompt: list[int], room: int):
    """`prompt` prefilled, then a function that takes one decode step on `path` per call, feeding the same token every
    time (a step's cost does not depend on which), the context growing by one; the static paths hold `room` calls."""
    if path not in PATHS:
        raise ValueError(f"path must be one of {', '.join(PATHS)}, got {path!r}")
    if path == "eager":
        return _eager_step(lm, prompt)
    return _static_step(lm, prompt, room, capture=path == "captured")


def _eager_step(lm: LoadedModel, prompt: list[int]):
    """The lab's eager step: the dynamic cache, a host-built mask, one pass."""
    logits, cache = forward_one(lm, prompt, None, 0)
    token, state = int(logits.argmax()), {"cache": cache, "past": len(prompt)}

    def one():
        _, state["cache"] = forward_one(lm, [token], state["cache"], state["past"])
        state["past"] += 1

    return one


def _static_step(lm: LoadedModel, prompt: list[int], room: int, capture: bool):
    """The static cache's step (decoding.static), as it is or captured as a CUDA graph, on a cache with room for
    every timed step."""
    step = StaticStep(lm, len(prompt) + room, capture=capture)
    token = int(step.feed(prompt, 0).argmax())
    return lambda: step.step(token)


def launches(device: torch.device, one) -> int | None:
    """Host calls that launch GPU work during one step (a captured graph's replay is one), by torch.profiler;
    None on a CPU (LAUNCHES_ON_CPU). Run after the timing: the step must have room for one more token."""
    if device.type != "cuda":
        return None
    return launch_count(profiled(device, one))


@torch.no_grad()
def random_model(size: Size, device: torch.device, dtype: torch.dtype) -> LoadedModel:
    """A llama of `size`'s shape with random weights on `device`: built without initialising (meta tensors), then
    every matrix filled from one block of uniform random values, every norm with ones, the rotary table computed."""
    from transformers import LlamaForCausalLM
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = size.config()
    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    model = model.to(dtype=dtype).to_empty(device=device)
    model.tie_weights()  # to_empty gives the shared embedding and head a tensor each
    generator = torch.Generator(device="cpu").manual_seed(0)
    block = (torch.rand(FILL_BLOCK, generator=generator) * 0.04 - 0.02).to(device=device, dtype=dtype)  # (FILL,)
    for p in model.parameters():
        if p.ndim == 1:
            p.fill_(1.0)  # RMSNorm weights
        else:
            _tile(p.view(-1), block)
    model.model.rotary_emb = LlamaRotaryEmbedding(config).to(device)
    model.eval()
    return LoadedModel(
        model=model,
        tokenizer=None,
        model_id=f"random:{size.name}",
        label=f"{size.name} shape, random weights",
        device=device,
        dtype=dtype,
        load_seconds=0.0,
    )


def _tile(flat: torch.Tensor, block: torch.Tensor) -> None:
    for start in range(0, flat.numel(), block.numel()):
        chunk = flat[start : start + block.numel()]
        chunk.copy_(block[: chunk.numel()])


def free_bytes(device: torch.device) -> int:
    """Memory free for a new model now: the GPU's, or the machine's available RAM."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    with open("/proc/meminfo") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["MemAvailable"].split()[0]) * 1024


def _free(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def real_vs_random(device: str = "auto", dtype: str | None = None, steps: int = 5, rounds: int = 4) -> dict:
    """The claim under the map, checked on the bundled shape: the bundled model's real weights and random ones of
    the same shape, timed in turns, each going first every other round (`rounds` × `steps` eager steps each,
    warm-up excluded)."""
    from decoding.models import BUNDLED, load_model

    dev = resolve_device(device)
    real = load_model(BUNDLED, str(dev), dtype)
    fake = random_model(BUNDLED_SHAPE, dev, real.dtype)
    if model_shape(real) != model_shape(fake):
        raise ValueError(f"the bundled model's shape {model_shape(real)} is not {BUNDLED_SHAPE.name}'s")
    times, turns = {"real": [], "random": []}, [("real", real), ("random", fake)]
    for i in range(rounds):
        for name, lm in turns if i % 2 == 0 else turns[::-1]:  # ABBA: neither goes first every round
            times[name] += step_times(lm, "eager", steps, 1, Watch())[0]
    real_ms, random_ms = median(times["real"]), median(times["random"])
    return dict(
        size=BUNDLED_SHAPE.name,
        real_ms=real_ms,
        random_ms=random_ms,
        random_over_real=random_ms / real_ms,
        # the fastest step of each: other work on a shared machine only ever slows a step down
        random_over_real_fastest=min(times["random"]) / min(times["real"]),
        alike=abs(min(times["random"]) / min(times["real"]) - 1) <= ALIKE,
        steps_each=len(times["real"]),
        device=str(dev),
        dtype=real.dtype_name,
    )
