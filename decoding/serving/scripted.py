"""The packed pass without the interpreter lock: transformers' Llama layers, operation for operation, in TorchScript.

A packed pass through transformers' modules (`ragged.packed_forward`) is about 2,000 tensor operations called from
Python for the bundled model. Each one lets go of the interpreter lock while it computes and must take it back before
the next one starts. In a class, the server's other threads (each Step's handler, gradio answering requests) hold
the lock four tenths of the time, and the pass waits for it at each of its operations. Beside two threads doing what
handlers do (`bench/packed_rows.py --beside 2`), a 3-row pass took 96 ms through the modules and 73 ms here, where
its linear layers alone took 56 ms (docs/measurements/serving.md).

A function compiled by TorchScript runs in TorchScript's own interpreter, in C++, and the call lets go of the lock once
for all of it. `_layers` is what transformers 5's `LlamaModel` computes for a packed pass, written out as the same
tensor operations in the same order on the same shapes: the embedding lookup and the rotary angles still come from
the model's own modules, and each session's attention is `ragged.attention`'s. So its logits and the keys and values
it appends are bit for bit those of the modules' pass (tests/unit/test_scripted.py checks it in float32 and bfloat16).

That equality is proven on the transformers `PROVEN_ON` names, the one the lock pins (requirements.txt): a release
that changes a cast in RMSNorm or the rotary order would silently change the bits, in bfloat16 above all. On any other
version, the first time a model is asked about, `proven` runs the check the tests run (two packed passes over fresh
caches, a prefill chunk and a decode row, through TorchScript and through the modules, compared bit for bit: 180 ms
for the bundled model on the 2-core machine), says what it found in a warning, and the model takes the scripted pass
only if the bits agree.

It applies where that holds (`fits`), on the CPU: a `LlamaForCausalLM` whose layers are all transformers' own (plain
`nn.Linear` without bias, so not `--weights int8/int4`'s quantized kernels; RMSNorm; SiLU), with no hook on any module
(a hook would not see the pass), and sessions whose caches hold plain `DynamicLayer`s. Any other model takes the
modules' pass.
"""

import threading
import warnings
import weakref

import torch
import torch.nn.functional as F
import transformers
from transformers import LlamaForCausalLM
from transformers.activations import SiLUActivation
from transformers.cache_utils import DynamicLayer
from transformers.models.llama.modeling_llama import (
    LlamaAttention,
    LlamaDecoderLayer,
    LlamaMLP,
    LlamaModel,
    LlamaRMSNorm,
    LlamaRotaryEmbedding,
)
from transformers.utils import output_capturing

from decoding.forward import set_layer
from decoding.models import LoadedModel

# the transformers whose Llama modules `_layers` is written from, bit for bit (tests/unit/test_scripted.py)
PROVEN_ON = "5.24.0"


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """transformers' LlamaRMSNorm.forward."""
    dtype = x.dtype
    h = x.to(torch.float32)
    variance = h.pow(2).mean(-1, keepdim=True)
    h = h * torch.rsqrt(variance + eps)
    return weight * h.to(dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    """transformers' rotate_half for Llama."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start: int, scaling: float | None) -> torch.Tensor:
    """One session's attention in a packed pass: its queries q (1, H, T, D) at positions start .. start + T - 1
    against its whole cache k, v (1, H_kv, L, D) -> (1, H, T, D). A decode row (T = 1) sees every position; a prefill
    chunk is causal: its token i sees the cache and itself, not the chunk's later tokens. The one home of that mask:
    `ragged.attention` (the modules' pass) calls it, and `_layers` (TorchScript compiles it with `_layers`)."""
    mask: torch.Tensor | None = None
    t = q.shape[2]
    if t > 1:
        seen = torch.arange(k.shape[2], device=q.device)  # (L,)
        mask = seen[None, :] <= start + torch.arange(t, device=q.device)[:, None]  # (T, L)
    return F.scaled_dot_product_attention(q, k, v, mask, scale=scaling, enable_gqa=True)


def _layers(
    hidden: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    weights: list[list[torch.Tensor]],
    norm: torch.Tensor,
    head: torch.Tensor,
    last: torch.Tensor,
    spans: list[list[int]],
    keys: list[list[torch.Tensor]],
    values: list[list[torch.Tensor]],
    eps: float,
    head_dim: int,
    scaling: float,
) -> tuple[torch.Tensor, list[list[torch.Tensor]], list[list[torch.Tensor]]]:
    """hidden (1, N, C): the packed row's embeddings; cos, sin (1, N, D): its rotary angles; weights: each layer's
    [input norm, q, k, v, o, post-attention norm, gate, up, down]; spans: each session's [first, last + 1, start
    position] in the row; keys, values: each session's per-layer cache tensors (an empty one where a layer is not yet
    written). Returns the logits at `last` (1, S, V) and each session's grown keys and values."""
    n = hidden.shape[1]
    cos = cos.unsqueeze(1)  # (1, 1, N, D), as apply_rotary_pos_emb broadcasts it
    sin = sin.unsqueeze(1)
    for i in range(len(weights)):
        w = weights[i]
        # LlamaDecoderLayer.forward, its self-attention through the cache's update and ragged.attention
        residual = hidden
        h = _rms_norm(hidden, w[0], eps)
        q = F.linear(h, w[1]).view(1, n, -1, head_dim).transpose(1, 2)  # (1, H, N, D)
        k = F.linear(h, w[2]).view(1, n, -1, head_dim).transpose(1, 2)  # (1, H_kv, N, D)
        v = F.linear(h, w[3]).view(1, n, -1, head_dim).transpose(1, 2)
        q = (q * cos) + (_rotate_half(q) * sin)
        k = (k * cos) + (_rotate_half(k) * sin)
        outs: list[torch.Tensor] = []
        for s in range(len(spans)):
            a, b, start = spans[s][0], spans[s][1], spans[s][2]
            keys[s][i] = torch.cat([keys[s][i], k[:, :, a:b]], dim=-2)  # DynamicLayer.update
            values[s][i] = torch.cat([values[s][i], v[:, :, a:b]], dim=-2)
            outs.append(attend(q[:, :, a:b], keys[s][i], values[s][i], start, scaling))
        attn = torch.cat(outs, dim=2).transpose(1, 2).contiguous()  # (1, N, H, D)
        attn = attn.reshape(1, n, -1).contiguous()
        hidden = residual + F.linear(attn, w[4])
        residual = hidden
        h = _rms_norm(hidden, w[5], eps)
        hidden = residual + F.linear(F.silu(F.linear(h, w[6])) * F.linear(h, w[7]), w[8])  # LlamaMLP
    hidden = _rms_norm(hidden, norm, eps)
    return F.linear(hidden[:, last, :], head), keys, values  # LlamaForCausalLM: the head at the kept positions


def _cat_each(groups: list[list[torch.Tensor]], dim: int) -> list[torch.Tensor]:
    return [torch.cat(group, dim=dim) for group in groups]


_compiled: dict = {}
_compiling = threading.Lock()


def _script(fn):
    """`fn` compiled by TorchScript, once per process (`_layers`: about a second)."""
    with _compiling:
        if fn not in _compiled:
            with warnings.catch_warnings():
                # TorchScript is deprecated in favour of torch.compile and torch.export; on the CPU their code calls
                # each kernel from Python, so only a scripted function runs a whole pass with the lock let go
                warnings.simplefilter("ignore", DeprecationWarning)
                _compiled[fn] = torch.jit.script(fn)
        return _compiled[fn]


def cat_each(groups: list[list[torch.Tensor]], dim: int) -> list[torch.Tensor]:
    """`torch.cat(group, dim)` of each group, in one call that lets go of the interpreter lock once: the prefix cache
    joins a hit's blocks layer by layer with it (60 operations for the bundled model, each of which would wait for the
    lock while a class's handlers run)."""
    with torch.jit.optimized_execution(False):
        return _script(_cat_each)(groups, dim)


# the module types of a LlamaForCausalLM: `_layers` writes out what each computes, or the pass calls it as it is (the
# embedding, the rotary angles); a model holding any other (a quantized linear, another activation) keeps the modules
WRITTEN_OUT = frozenset(
    {
        LlamaForCausalLM,
        LlamaModel,
        LlamaDecoderLayer,
        LlamaAttention,
        LlamaMLP,
        LlamaRMSNorm,
        LlamaRotaryEmbedding,
        SiLUActivation,
        torch.nn.Linear,
        torch.nn.Embedding,
        torch.nn.ModuleList,
    }
)


def _inert(hooks) -> bool:
    """Whether every hook in `hooks` is one of transformers' output-capturing hooks. transformers puts them on the
    model's layers for good the first time a pass asks for hidden states (the logit lens does), and they record only
    within a call that asked for them (their collector is a context variable that call sets), which a packed pass
    never is."""
    return all(getattr(hook, "__module__", None) == output_capturing.__name__ for hook in hooks)


def fits(lm: LoadedModel, caches) -> bool:
    """Whether `_layers` computes exactly what the model's modules would for these sessions' caches: every module one
    it writes out (linears without bias, one norm epsilon), no hook that does something (the scripted pass runs none),
    and caches of plain `DynamicLayer`s. One walk over the modules (0.8 ms for the bundled model's 400)."""
    model = lm.model
    if lm.device.type != "cpu":  # not yet run on a GPU (the GPU check, docs/gpu-check.md, would be the place)
        return False
    if type(model) is not LlamaForCausalLM:
        return False
    hooks = torch.nn.modules.module
    if not (_inert(hooks._global_forward_hooks.values()) and _inert(hooks._global_forward_pre_hooks.values())):
        return False
    eps = model.model.norm.variance_epsilon
    for module in model.modules():
        kind = type(module)
        if kind not in WRITTEN_OUT or (kind is torch.nn.Linear and module.bias is not None):
            return False
        if kind is LlamaRMSNorm and module.variance_epsilon != eps:
            return False
        if not (_inert(module._forward_hooks.values()) and _inert(module._forward_pre_hooks.values())):
            return False
    return all(type(layer) is DynamicLayer for cache in caches for layer in cache.layers) and proven(lm)


_proofs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> whether the check found the same bits
_proving = threading.Lock()


def proven(lm: LoadedModel) -> bool:
    """Whether `_layers` is known to compute the modules' bits for this model: on `PROVEN_ON`, by the tests; on any
    other transformers, by one check the first time the model is asked about, whose verdict is kept."""
    if transformers.__version__ == PROVEN_ON:
        return True
    with _proving:
        if lm.model not in _proofs:
            _proofs[lm.model] = _check(lm)
        return _proofs[lm.model]


def _check(lm: LoadedModel) -> bool:
    """Two packed passes over fresh caches (two prompts' chunks, then a decode row beside a chunk on a cache), through
    `_layers` and through the modules: the logits and every key and value, bit for bit. Warns with the verdict."""
    from decoding.serving import ragged  # ragged imports this module for its packed pass

    def two_passes(run) -> list[torch.Tensor]:
        caches = [ragged.new_cache(lm), ragged.new_cache(lm)]
        ids = [i % lm.vocab_size for i in range(1, 11)]
        first = run([ragged.Segment(caches[0], ids[:4], 0), ragged.Segment(caches[1], ids[4:6], 0)])
        then = run([ragged.Segment(caches[0], ids[6:7], 4), ragged.Segment(caches[1], ids[7:], 2)])
        return [first, then] + [t for cache in caches for layer in cache.layers for t in (layer.keys, layer.values)]

    try:
        ragged.install(lm)
        mine = two_passes(lambda segments: ragged.scripted_forward(lm, segments))
        theirs = two_passes(lambda segments: ragged.packed_forward(lm, segments, scripted=False))
        same = all(torch.equal(a, b) for a, b in zip(mine, theirs, strict=True))
        found = "the same bits: it runs the scripted pass" if same else "other bits: it runs the modules' pass"
    except Exception as err:  # noqa: BLE001 -- a transformers the copy no longer matches: the modules' pass runs
        same, found = False, f"{type(err).__name__}: {err}; it runs the modules' pass"
    warnings.warn(
        f"decoding/serving/scripted.py copies transformers {PROVEN_ON}'s Llama layers, and this is "
        f"{transformers.__version__}: {lm.model_id} checked against its modules at first use gave {found}",
        RuntimeWarning,
        stacklevel=2,
    )
    return same


def _tensors(layer: DynamicLayer, empty: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A layer's keys and values, or the empty tensor transformers' `lazy_initialization` starts one with."""
    return (layer.keys, layer.values) if layer.is_initialized else (empty, empty)


@torch.inference_mode()
def packed_forward(lm: LoadedModel, ids: torch.Tensor, positions: torch.Tensor, last: torch.Tensor, segments, spans):
    """`ragged.packed_forward`'s pass for a model that `fits`: ids, positions (1, N); last (S,) -> logits (1, S, V);
    each segment's cache grows by its tokens, as the modules' pass grows it."""
    inner = lm.model.model
    hidden = inner.embed_tokens(ids)  # (1, N, C)
    cos, sin = inner.rotary_emb(hidden, position_ids=positions)  # (1, N, D) each
    weights = [
        [
            layer.input_layernorm.weight,
            layer.self_attn.q_proj.weight,
            layer.self_attn.k_proj.weight,
            layer.self_attn.v_proj.weight,
            layer.self_attn.o_proj.weight,
            layer.post_attention_layernorm.weight,
            layer.mlp.gate_proj.weight,
            layer.mlp.up_proj.weight,
            layer.mlp.down_proj.weight,
        ]
        for layer in inner.layers
    ]
    empty = hidden.new_empty(0)  # what a new layer's keys and values start as; `cat` never writes it
    held = [[_tensors(layer, empty) for layer in s.cache.layers] for s in segments]
    keys = [[k for k, _ in layers] for layers in held]
    values = [[v for _, v in layers] for layers in held]
    attn = inner.layers[0].self_attn
    with torch.jit.optimized_execution(False):  # the plain interpreter: no graph specialised to one pass's shapes
        logits, keys, values = _script(_layers)(
            hidden,
            cos,
            sin,
            weights,
            inner.norm.weight,
            lm.model.lm_head.weight,
            last,
            [list(span) for span in spans],
            keys,
            values,
            inner.norm.variance_epsilon,
            attn.head_dim,
            attn.scaling,
        )
    for segment, seg_keys, seg_values in zip(segments, keys, values):
        for layer, k, v in zip(segment.cache.layers, seg_keys, seg_values):
            set_layer(layer, k, v)
    return logits
