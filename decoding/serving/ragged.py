"""One forward pass for many sessions at once: their pending tokens packed into one row, each session's own cache.

Decode is memory-bound: a step reads every weight to produce one token, so the weights are best read once for
everyone's next token. The usual way to batch is a padded (B, T) block with one batch cache, but our sessions
have caches of different lengths, and building a padded batch cache means copying every session's K/V at every
step (measured at ~850 ms for 30 sessions on 2 cores: more than the forward pass itself).

So a tick packs instead, as vLLM does: every pending token of every session goes into one (1, N) row, with its
own position id. The weight-heavy matmuls (projections, MLP, LM head) then run once over all N tokens. Only
attention is per session: `RaggedCache.update` appends each session's slice of the new K/V to that session's own
`DynamicCache` (exactly what a solo step appends) and hands back the list of their full keys and values, and
`attention` runs each session's queries against its own keys (causal within a prefill chunk). Nothing is
copied between sessions, no padding, no mask for the batch: a decode row and a 64-token prefill chunk ride in
the same pass. The model's attention implementation is a dispatcher: any other forward pass (a solo step, beam
search, the batching lesson's own batches) takes transformers' SDPA path unchanged, bit for bit.
"""

import itertools
from dataclasses import dataclass

import torch
from transformers import AttentionInterface, DynamicCache
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

from decoding.clock import Timer
from decoding.forward import empty_cache
from decoding.models import LoadedModel
from decoding.passes import Pass
from decoding.serving import scripted as scripted_pass

NAME = "decoding_lab_ragged"


@dataclass
class Segment:
    """One session's tokens in a packed pass: `ids` go into `cache` at positions start, start + 1, ..."""

    cache: DynamicCache
    ids: list[int]
    start: int


class RaggedKeys(list):
    """Each session's full keys (or values) after this pass, with where its queries sit in the packed row."""

    def __init__(self, tensors, spans):
        super().__init__(tensors)
        self.spans = spans  # (first, last + 1, start position) of each segment in the packed row


class RaggedCache:
    """A per-pass view over the sessions' own caches; the model writes through it and forgets it afterwards."""

    def __init__(self, segments: list[Segment]):
        self.segments = segments
        ends = list(itertools.accumulate(len(s.ids) for s in segments))
        self.spans = [(end - len(s.ids), end, s.start) for s, end in zip(segments, ends)]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return 0  # positions are given explicitly; nothing reads this for a packed pass

    def update(self, keys: torch.Tensor, values: torch.Tensor, layer_idx: int, *args, **kwargs):
        """keys, values: (1, H_kv, N, D) for every packed token -> each session's (1, H_kv, L_s, D)."""
        ks, vs = [], []
        for segment, (a, b, _) in zip(self.segments, self.spans):
            k, v = segment.cache.update(keys[:, :, a:b], values[:, :, a:b], layer_idx)
            ks.append(k)
            vs.append(v)
        return RaggedKeys(ks, self.spans), RaggedKeys(vs, self.spans)


def attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """The model's attention: per session for a packed pass, transformers' SDPA for anything else."""
    if not isinstance(key, RaggedKeys):
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout, scaling, **kwargs)
    outs = []
    for (a, b, start), k, v in zip(key.spans, key, value):
        outs.append(scripted_pass.attend(query[:, :, a:b], k, v, start, scaling))  # (1, H, T, D) each
    return torch.cat(outs, dim=2).transpose(1, 2).contiguous(), None  # (1, N, H, D)


def install(lm: LoadedModel) -> None:
    """Route the model's attention through `attention` (idempotent). Solo passes stay on the SDPA path."""
    config = lm.model.config
    if config._attn_implementation == NAME:
        return
    if config._attn_implementation != "sdpa":
        raise ValueError(f"packed batching needs the model's SDPA attention, not {config._attn_implementation!r}")
    AttentionInterface.register(NAME, attention)
    AttentionMaskInterface.register(NAME, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])  # same masks as SDPA for solo passes
    lm.model.set_attn_implementation(NAME)


def _packed_row(lm: LoadedModel, segments: list[Segment]):
    """The packed row's token ids and positions (1, N), the per-pass cache view, and each segment's last index (S,)."""
    ids = torch.tensor([[i for s in segments for i in s.ids]], device=lm.device)  # (1, N)
    pos = [p for s in segments for p in range(s.start, s.start + len(s.ids))]
    positions = torch.tensor([pos], device=lm.device)  # (1, N)
    ragged_cache = RaggedCache(segments)
    last = torch.tensor([b - 1 for _, b, _ in ragged_cache.spans], device=lm.device)  # (S,)
    return ids, positions, ragged_cache, last


def packed_forward(lm: LoadedModel, segments: list[Segment], scripted: bool = True) -> torch.Tensor:
    """One pass over every segment; returns the float32 logits at each segment's last token (S, V).

    A model that `decoding.serving.scripted` fits (the bundled one) runs the same operations compiled by TorchScript,
    with the interpreter lock let go for the whole pass, bit for bit the modules' result; `scripted=False` runs the
    modules whatever the model."""
    return packed_pass(lm, segments, scripted)[0]


@torch.inference_mode()
def packed_pass(lm: LoadedModel, segments: list[Segment], scripted: bool = True) -> tuple[torch.Tensor, str]:
    """`packed_forward`, and which implementation ran it (decoding.passes.IMPLS): "scripted" or "modules"."""
    if scripted and scripted_pass.fits(lm, [s.cache for s in segments]):
        return scripted_forward(lm, segments), "scripted"
    ids, positions, ragged_cache, last = _packed_row(lm, segments)
    # a 4-D mask is passed through as it is: the packed pass needs none (attention masks per segment)
    no_mask = torch.zeros(1, 1, 1, 1, device=lm.device)
    out = lm.model(
        input_ids=ids,
        position_ids=positions,
        attention_mask=no_mask,
        cache=ragged_cache,
        use_cache=True,
        logits_to_keep=last,
    )
    return out.logits[0].to(dtype=torch.float32), "modules"  # (S, V)


@torch.inference_mode()
def scripted_forward(lm: LoadedModel, segments: list[Segment]) -> torch.Tensor:
    """`packed_forward`'s pass as TorchScript runs it, for a model and caches that `scripted.fits` (the caller asked):
    the float32 logits at each segment's last token (S, V)."""
    ids, positions, ragged_cache, last = _packed_row(lm, segments)
    logits = scripted_pass.packed_forward(lm, ids, positions, last, segments, ragged_cache.spans)
    return logits[0].to(dtype=torch.float32)  # (S, V)


def feed_together(lm: LoadedModel, runs) -> None:
    """Feed every run that waits for a pass (`decoding.loop.Run.step(feed=False)`) in one packed pass: the weights
    are read once for all of their next tokens. A run's logits may then differ from a pass of its own by float noise
    (the Temperature 0 & batching tab shows why); a lone run gets a pass of its own, bit-exact with `generate()`."""
    hungry = [run for run in runs if run.hungry]
    if any(run.static is not None or run.scheduler is not None for run in hungry):
        raise ValueError("runs fed together decode on their own growing caches (no static cache, no scheduler)")
    if len(hungry) <= 1:
        for run in hungry:
            run.feed()
        return
    install(lm)
    segments = [Segment(run.cache, run.unfed, len(run.ids) - len(run.unfed)) for run in hungry]
    with Timer(lm.device) as t:
        logits, impl = packed_pass(lm, segments)  # (S, V)
    for run, row in zip(hungry, logits):
        run.fed(row, Pass(t.ms, rows=len(hungry), mode="packed", impl=impl))


def new_cache(lm: LoadedModel) -> DynamicCache:
    return empty_cache(lm.model.config)
