"""The model call, and the KV cache it grows.

Every loop in the lab that feeds the model a cache goes through `forward` (or `forward_one`, for one sequence;
`forward_positions` for more positions' logits, `forward_hidden` for every layer's hidden state), and every rewind of
a cache goes through `rewind`. The other places that call the model are listed, each with its reason, in
`tests/unit/test_one_way.py` (`MODEL_CALLS`). `kv_cache_bytes` is what a live cache holds, measured.
"""

import copy
import threading

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from decoding.models import LoadedModel


@torch.inference_mode()
def forward(lm: LoadedModel, ids: torch.Tensor, cache, past: int):
    """The model call: `ids` (B, T) at positions past .. past + T - 1 -> the last position's float32 logits
    (B, V) and the grown cache."""
    logits, cache = forward_positions(lm, ids, cache, past, 1)  # (B, 1, V)
    return logits[:, -1], cache  # (B, V)


@torch.inference_mode()
def forward_positions(lm: LoadedModel, ids: torch.Tensor, cache, past: int, keep: int):
    """`forward` keeping the float32 logits of the last `keep` positions: (B, keep, V) and the grown cache. A
    speculative verify reads every drafted position, a scored answer every token's."""
    mask = torch.ones(ids.shape[0], past + ids.shape[1], dtype=torch.long, device=lm.device)  # (B, past + T)
    out = lm.model(input_ids=ids, attention_mask=mask, cache=cache, use_cache=True, logits_to_keep=keep)
    return out.logits.to(dtype=torch.float32), out.cache  # (B, keep, V)


@torch.inference_mode()
def forward_hidden(lm: LoadedModel, ids: torch.Tensor, cache, past: int):
    """`forward` with every layer's hidden state, the logit lens's pass: (B, V) float32 logits at the last position,
    the hidden states (L + 1 tensors of (B, T, H): the embeddings', then each layer's output, the last one normed),
    and the grown cache; with no cache given (None) none is made, for a pass over a whole text."""
    mask = torch.ones(ids.shape[0], past + ids.shape[1], dtype=torch.long, device=lm.device)  # (B, past + T)
    out = lm.model(
        input_ids=ids,
        attention_mask=mask,
        cache=cache,
        use_cache=cache is not None,
        logits_to_keep=1,
        output_hidden_states=True,
    )
    return out.logits[:, -1].to(dtype=torch.float32), out.hidden_states, out.cache  # (B, V)


def forward_one(lm: LoadedModel, ids: list[int], cache, past: int):
    """`forward` for one sequence: token ids (the whole prompt, or one token) -> logits (V,) and the cache."""
    logits, cache = forward(lm, torch.tensor([ids], device=lm.device), cache, past)  # (1, T) -> (1, V)
    return logits[0], cache  # (V,)


def rewind(cache, length: int) -> None:
    """Keep the first `length` positions of the cache, drop the rest (nothing when it holds no more).
    The one place that knows transformers 5's `crop` takes minus the number of tokens to drop (a `StaticCache`
    keeps its tensors and moves its length back; its length is a tensor on the device). Layer by layer: a pass that
    failed part way through the model has grown its first layers and not the others."""
    for layer in cache.layers:
        drop = int(layer.get_seq_length()) - length
        if drop > 0:
            layer.crop(-drop)


def kv_cache_bytes(cache) -> int:
    """What a live KV cache holds, measured: the bytes of its key and value tensors (0 for no cache)."""
    layers = getattr(cache, "layers", ())
    return sum(t.nbytes for layer in layers for t in (layer.keys, layer.values) if isinstance(t, torch.Tensor))


_EMPTY: dict[int, tuple[object, DynamicCache]] = {}  # id(config) -> (config, an empty cache for it)
_EMPTY_LOCK = threading.Lock()


def empty_cache(config) -> DynamicCache:
    """A new, empty cache for a model of `config`: a copy of one made once per config. `DynamicCache(config=...)`
    reads the layer types from the config on every call (0.34 ms of CPU for the bundled model, against 0.11 ms for
    the copy), and the server makes one for every new prompt and every prefix-cache hit."""
    with _EMPTY_LOCK:
        kept = _EMPTY.get(id(config))
        if kept is None or kept[0] is not config:  # the config is kept with it, so an id is never reused
            kept = _EMPTY[id(config)] = (config, DynamicCache(config=config))
    return copy.deepcopy(kept[1])


def filled_cache(config, layers: list[tuple[torch.Tensor, torch.Tensor]]) -> DynamicCache:
    """A new cache for a model of `config` holding each layer's (keys, values), (1, H_kv, T, D) each, taken as they are:
    the caller gives tensors no one else will write (a cache's update makes new tensors, it never writes the old).

    A plain `DynamicLayer` is set directly (`set_layer`, the one place that knows its fields), where transformers'
    `update` would make an empty tensor and copy the keys onto it, 4 tensor operations more per layer. Each operation
    lets go of the interpreter lock, and a server's thread busy with other sessions' Python waits to take it back (up
    to 5 ms each time: CPython's switch interval). Any other kind of layer (a sliding window's) goes through
    `update`."""
    cache = empty_cache(config)
    for index, (layer, (keys, values)) in enumerate(zip(cache.layers, layers, strict=True)):
        if type(layer) is DynamicLayer and not layer.is_initialized:
            set_layer(layer, keys, values)
        else:
            cache.update(keys, values, index)
    return cache


def set_layer(layer: DynamicLayer, keys: torch.Tensor, values: torch.Tensor) -> None:
    """Make a plain `DynamicLayer` hold `keys` and `values`, (1, H_kv, T, D) each, as its `update` leaves it."""
    layer.device, layer.keys, layer.values, layer.is_initialized = keys.device, keys, values, True
