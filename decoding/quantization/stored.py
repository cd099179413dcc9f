"""What a GGUF file holds, read from the file itself: each kind of tensor, its ggml type, what that type stores per
weight, and its bytes; beside them the bytes a float32 decode step reads (every weight at 4 bytes, the tied
embedding and LM head once).

The bundled SmolLM2 file keeps its 210 layer matrices in Q4_1 (int4, groups of 32, a float16 scale and minimum
each: 20 bytes per 32 weights), its token embedding, which the model ties to its LM head, in Q8_0 (int8, groups of
32, a float16 scale: 34 bytes per 32), and its norms in F32. The lab runs that file dequantized to float32, so its
"float32" holds exactly those values, and re-rounding a layer to int4 in groups of 32 gives back the same weights.
"""

from dataclasses import dataclass
from pathlib import Path

import gguf

# what each ggml block type stores, in words (ggml's block_q4_1 and block_q8_0; others are said by their sizes)
TYPES = {
    "F32": "float32, 4 bytes a weight",
    "F16": "float16, 2 bytes a weight",
    "Q8_0": "int8 in groups of 32, a float16 scale each",
    "Q4_0": "int4 in groups of 32, a float16 scale each",
    "Q4_1": "int4 in groups of 32, a float16 scale and minimum each",
}
LAYERS, EMBEDDING, HEAD, NORMS = "layer matrices", "token embedding (tied to the LM head)", "LM head", "norms"


@dataclass(frozen=True)
class StoredKind:
    """The tensors of one part of the model stored in one ggml type."""

    part: str  # LAYERS, EMBEDDING, HEAD or NORMS
    ggml_type: str  # "Q4_1"
    format: str  # what the type stores per weight, in words
    tensors: int
    weights: int
    bytes: int

    @property
    def bits_per_weight(self) -> float:
        return 8 * self.bytes / self.weights


@dataclass(frozen=True)
class Stored:
    name: str  # the file's name
    file_bytes: int  # the whole file: tensors, tokenizer and metadata
    kinds: tuple[StoredKind, ...]  # layer matrices first

    @property
    def tensor_bytes(self) -> int:
        return sum(k.bytes for k in self.kinds)

    @property
    def float32_bytes(self) -> int:
        """What a float32 decode step reads: every stored weight at 4 bytes (a tied embedding is the head's)."""
        return 4 * sum(k.weights for k in self.kinds)


def part_of(tensor_name: str) -> str:
    """Which part of the model a GGUF tensor is, by llama.cpp's names (blk.N.attn_q.weight, token_embd.weight ...)."""
    if tensor_name.startswith("token_embd"):
        return EMBEDDING
    if tensor_name.startswith("output."):
        return HEAD
    if "norm" in tensor_name:
        return NORMS
    return LAYERS


def type_words(ggml_type: gguf.GGMLQuantizationType) -> str:
    if ggml_type.name in TYPES:
        return TYPES[ggml_type.name]
    block, size = gguf.GGML_QUANT_SIZES[ggml_type]
    return f"{size} bytes per {block} weights"


def read_stored(path: Path) -> Stored:
    """Each (part, ggml type) of the GGUF at `path` with its tensor count, weights and bytes, from the file's own
    tensor table (the weights are memory-mapped, never read)."""
    reader = gguf.GGUFReader(path)
    found: dict[tuple[str, gguf.GGMLQuantizationType], list[int]] = {}
    for t in reader.tensors:
        counts = found.setdefault((part_of(t.name), t.tensor_type), [0, 0, 0])
        counts[0] += 1
        counts[1] += int(t.n_elements)
        counts[2] += int(t.n_bytes)
    order = (LAYERS, EMBEDDING, HEAD, NORMS)
    kinds = [
        StoredKind(part, kind.name, type_words(kind), *counts)
        for (part, kind), counts in sorted(found.items(), key=lambda item: (order.index(item[0][0]), item[0][1].name))
    ]
    return Stored(Path(path).name, Path(path).stat().st_size, tuple(kinds))
