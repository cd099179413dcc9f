"""The static-cache decode step: a KV cache sized once, and a one-token forward fixed enough to be captured.

The eager step grows its cache every token and builds its mask on the host at a new shape each time: a few hundred
small kernels launched one by one from Python, and on a GPU their launches, not the weights' bytes, set its time.
Here the cache holds prompt + max new tokens from the start (transformers' `StaticCache`, allocated before the first
pass); the step's input is one token written into a fixed (1, 1) buffer; its position is the cache's own length, a
tensor on the device that the cache advances in place; its mask is built on the device at the cache's full length.
Nothing in the step changes shape, address or needs the host, so on CUDA it is recorded once as a CUDA graph and
replayed every token (one launch for the whole step: nano-vllm's recipe). On the CPU the same step runs uncaptured.
It returns the full float32 logits, so every sampler and chart reads it as it reads the eager step's.
Prefill, and a pass over several tokens at once (forced tokens), stay eager, on the same cache.
Safe capture by construction: only a cache of plain `StaticLayer`s is captured (a sliding-window layer keeps its
length as a Python int and branches on it: a graph would replay the branch taken at capture); the capture records
this thread's stream alone ("thread_local"), so another thread's CUDA work (a side panel, an inspector) neither breaks
nor joins it; the memory the graph keeps for its own tensors (its pool) is counted, and the session store counts it.
transformers' recipe: https://huggingface.co/docs/transformers/llm_optims#static-kv-cache-and-torchcompile
"""

import torch

from decoding.forward import forward_one, rewind
from decoding.models import LoadedModel

# passes run before capture: they pick the kernels and allocate the workspaces the graph then reuses
CAPTURE_WARMUP = 3
# torch's cudaStreamCaptureMode: "thread_local" forbids unsafe calls in the capturing thread only; torch's default,
# "global", makes another thread's cudaMalloc or synchronize during the capture an error (bench/gpu_check.py compares)
ERROR_MODES = ("thread_local", "global", "relaxed")


def can_capture(device: torch.device) -> bool:
    """A CUDA graph needs a CUDA device; everywhere else the static step runs as it is."""
    return device.type == "cuda" and torch.cuda.is_available()


def static_kind(lm: LoadedModel) -> str:
    """The kind of one-token pass a static run of this model takes where it can (decoding.passes.KINDS): "captured"
    on CUDA for a cache of plain StaticLayers (what a graph replays right), else "static", the step as it is."""
    if not can_capture(lm.device):
        return "static"
    return "static" if _odd_layers(_allocated_cache(lm, 1)) else "captured"  # a cache of one position says which


def check_capturable(cache) -> None:
    """Refuse a cache a graph could replay wrongly: every layer must be a plain `StaticLayer`, whose length is a
    tensor on the device that the step reads and advances there. A subclass may decide on the host: the sliding-window
    layer keeps its length as a Python int and branches on it, and a graph would replay the branch taken at capture."""
    odd = _odd_layers(cache)
    if odd:
        shown = "; ".join(odd[:3]) + (f"; and {len(odd) - 3} more" if len(odd) > 3 else "")
        raise ValueError(
            f"a CUDA graph replays only a cache of plain StaticLayers (the length on the device, no branch on the "
            f"host); {shown}: run this model's static step uncaptured (capture=False)"
        )


def _odd_layers(cache) -> list[str]:
    from transformers import StaticLayer

    return [f"layer {i} is a {type(x).__name__}" for i, x in enumerate(cache.layers) if type(x) is not StaticLayer]


class StaticStep:
    """One sequence's static KV cache of `max_len` positions and its decode step, captured when `capture` (default:
    on CUDA, for a cache of plain StaticLayers). Owns its cache: a Run keeps one per run, and Back moves `length` back
    (`rewind`). `error_mode`: the capture's cudaStreamCaptureMode (ERROR_MODES)."""

    def __init__(self, lm: LoadedModel, max_len: int, capture: bool | None = None, error_mode: str = "thread_local"):
        if capture and not can_capture(lm.device):
            raise ValueError(f"a CUDA graph needs a CUDA device; this model is on {lm.device}")
        if not (isinstance(max_len, int) and 1 <= max_len <= lm.context_length):
            raise ValueError(f"a static cache holds 1 to {lm.context_length} positions, got {max_len!r}")
        if error_mode not in ERROR_MODES:
            raise ValueError(f"capture error mode must be one of {', '.join(ERROR_MODES)}, got {error_mode!r}")
        self.lm, self.max_len, self.error_mode = lm, max(max_len, CAPTURE_WARMUP), error_mode
        # made outside inference mode: Back moves the cache's length in place, outside it
        self.cache = _allocated_cache(lm, self.max_len)
        self.token = torch.zeros(1, 1, dtype=torch.long, device=lm.device)  # (1, 1): the fixed input buffer
        self.graph, self.out = None, None
        self._pool_bytes = 0
        if capture is None:  # by default, captured where a graph can replay it (on CUDA, plain layers)
            capture = can_capture(lm.device) and not _odd_layers(self.cache)
        if capture:
            check_capturable(self.cache)
            self._capture()

    @property
    def captured(self) -> bool:
        return self.graph is not None

    def kind_of(self, tokens: int) -> str:
        """The kind of pass `feed` runs for `tokens` tokens (decoding.passes.KINDS): one token takes the step,
        "captured" when a graph replays it, "static" when it runs as it is; more take one "eager" pass."""
        if tokens != 1:
            return "eager"
        return "captured" if self.captured else "static"

    @property
    def pool_bytes(self) -> int:
        """The memory the captured graph keeps for its own tensors (its pool), measured at capture; 0 uncaptured."""
        return self._pool_bytes

    @property
    def length(self) -> int:
        """Positions the cache holds (the next token's position)."""
        return int(self.cache.get_seq_length())

    def rewind(self, length: int) -> None:
        rewind(self.cache, length)

    def addresses(self) -> dict[str, list[int]]:
        """Where the tensors a replay reads and writes lie: every layer's keys, values and length, the input buffer.
        A graph replays these addresses, so none may move for as long as the step lives (Back, forced passes)."""
        layers = self.cache.layers
        return {
            "keys": [layer.keys.data_ptr() for layer in layers],
            "values": [layer.values.data_ptr() for layer in layers],
            "length": [layer.cumulative_length.data_ptr() for layer in layers],
            "token": [self.token.data_ptr()],
        }

    def feed(self, ids: list[int], past: int) -> torch.Tensor:
        """`ids` at positions past .. past + T - 1 -> the last position's float32 logits (V,). One token at the cache's
        end takes the static step; a prompt, or tokens fed together, take one eager pass on the same cache."""
        assert past == self.length, f"the static cache holds {self.length} positions, the pass starts at {past}"
        if past + len(ids) > self.max_len:
            raise ValueError(f"{past + len(ids)} positions do not fit the static cache of {self.max_len}")
        if self.kind_of(len(ids)) == "eager":
            return forward_one(self.lm, ids, self.cache, past)[0]  # (V,)
        return self.step(ids[0])

    @torch.inference_mode()
    def step(self, token_id: int) -> torch.Tensor:
        """One token through the static step: float32 logits (V,) at the next position; the cache grows by one."""
        self.token.fill_(token_id)  # the same buffer every step: a captured graph reads it at its fixed address
        if self.graph is None:
            return self._one()[0]  # (V,)
        self.graph.replay()
        return self.out[0].clone()  # (V,): the next replay overwrites `out`

    def _one(self) -> torch.Tensor:
        # no attention mask, no positions from the host: the model reads the position from the cache's length tensor
        # and builds a (1, 1, 1, max_len) mask from it on the device
        out = self.lm.model(input_ids=self.token, cache=self.cache, use_cache=True, logits_to_keep=1)
        return out.logits[:, -1].to(dtype=torch.float32)  # (1, V)

    @torch.inference_mode()
    def _capture(self) -> None:
        """Record the step once, on an empty cache: warm-up passes on a side stream (kernel choice, workspaces), the
        cache moved back to 0, then one recorded pass. Replays then run it at whatever length the cache holds."""
        device = self.lm.device
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(CAPTURE_WARMUP):
                self._one()
        torch.cuda.current_stream(device).wait_stream(side)
        self.rewind(0)  # the warm-up's keys and values stay behind the length: masked, then overwritten
        self.graph = torch.cuda.CUDAGraph()
        torch.cuda.empty_cache()  # as torch.cuda.graph does on entry: what is reserved after it is the graph's growth
        reserved = torch.cuda.memory_reserved(device)
        # thread_local: another thread's CUDA work during the capture is neither an error nor recorded into the graph
        with torch.cuda.graph(self.graph, capture_error_mode=self.error_mode):
            self.out = self._one()  # (1, V): recorded, not run
        assert self.length == 0, "capturing must not move the cache"
        self._pool_bytes = _graph_pool_bytes(self.graph, torch.cuda.memory_reserved(device) - reserved)


def _graph_pool_bytes(graph, reserved_growth: int) -> int:
    """The memory a captured graph keeps for its own tensors (its private pool, held as long as the graph): the
    allocator's segments of that pool, so another thread's allocations are not counted; where this torch's snapshot
    does not name each segment's pool, what the capture added to the reserved memory."""
    segments = torch.cuda.memory_snapshot()
    if not segments or any("segment_pool_id" not in s for s in segments):
        return max(reserved_growth, 0)
    pool = tuple(graph.pool())
    return sum(s["total_size"] for s in segments if tuple(s["segment_pool_id"]) == pool)


def _allocated_cache(lm: LoadedModel, max_len: int):
    """A static cache with every layer's keys and values allocated now, before any pass (capture needs their
    addresses fixed)."""
    from transformers import StaticCache  # imported when a static run starts: importing the loop stays light

    config = lm.model.config
    cache = StaticCache(config=config, max_cache_len=max_len)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    cache.early_initialization(batch_size=1, num_heads=kv_heads, head_dim=head_dim, dtype=lm.dtype, device=lm.device)
    return cache
