"""The weight formats the lesson compares, what each one stores per weight, and which part of the model it rounds.

float32 is the reference: the bundled Q4_1 GGUF as transformers dequantizes it. Its 210 layer matrices are stored
as Q4_1 (int4 in groups of 32 inputs, a float16 scale and minimum each) and its LM head (tied to the embedding) as
Q8_0 (int8 in groups of 32, a float16 scale each), so "as stored" holds exactly float32's weights in the file's
bytes. The others are rounded from float32 with round-to-nearest, no calibration data: bfloat16 (8 bits of mantissa
dropped), int8 weight-only (one scale per output channel), int8 with the activations quantized too (one scale per
tensor, computed on the fly for each input: the counter-example, see LLM.int8(), https://arxiv.org/abs/2208.07339),
and int4 weight-only in groups along the input (a scale and a minimum per group, Q4_1's grid). Group sizes must
divide the hidden size (576 for SmolLM2): 32 or 64.

A format rounds the layers and the LM head; `parts` applies it to one of them only, the other kept in float32, so
a page can say which part a format's drift comes from.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    name: str
    label: str
    weight_bits: int  # bits per weight as stored
    group: int | None = None  # inputs per scale; None: one scale per output channel (or none at all)
    scale_bytes: int = 0  # bytes of scale (and zero point) per group or per channel
    activations: bool = False  # activations quantized to int8 too, per tensor, at run time
    head: "Format | None" = None  # the LM head's own format where it differs from the layers' (None: the same)

    def nbytes(self, out_features: int, in_features: int) -> int:
        """Bytes a matrix (out × in) takes in this format: the weights and their scales."""
        weights = out_features * in_features * self.weight_bits // 8
        if self.scale_bytes == 0:
            return weights
        groups = in_features // self.group if self.group else 1
        return weights + out_features * groups * self.scale_bytes

    @property
    def head_format(self) -> "Format":
        return self.head or self


FLOAT32 = Format("float32", "float32 (reference)", 32)
# the GGUF's own two block formats (ggml's block_q4_1 and block_q8_0): float16 scales, so 20 and 34 bytes per 32
Q4_1 = Format("Q4_1", "int4, group 32, a float16 scale and minimum (Q4_1)", 4, group=32, scale_bytes=4)
Q8_0 = Format("Q8_0", "int8, group 32, a float16 scale (Q8_0)", 8, group=32, scale_bytes=2)
AS_STORED = "as stored"

FORMATS = {
    f.name: f
    for f in (
        FLOAT32,
        Format(AS_STORED, "as stored in the GGUF: Q4_1 layers, Q8_0 head", 4, group=32, scale_bytes=4, head=Q8_0),
        Format("bfloat16", "bfloat16", 16),
        Format("int8", "int8 weight-only, per channel", 8, scale_bytes=4),
        Format("int8-activations", "int8 weights + int8 activations (per tensor)", 8, scale_bytes=4, activations=True),
        Format("int4", "int4 weight-only, group 32 (Q4_1's grid)", 4, group=32, scale_bytes=8),
        Format("int4, head kept", "int4 layers (group 32), float32 LM head", 4, group=32, scale_bytes=8, head=FLOAT32),
        Format("int4-g64", "int4 weight-only, group 64", 4, group=64, scale_bytes=8),
    )
}
SERVED = ("float32", "bfloat16", "int8", "int4")  # what --weights accepts
BOTH, LAYERS, HEAD = "layers and head", "layers only", "head only"
PARTS = (BOTH, LAYERS, HEAD)  # where a format is applied; the rest stays float32


def get_format(name: str) -> Format:
    if name not in FORMATS:
        raise ValueError(f"weights must be one of {', '.join(map(repr, FORMATS))}; got {name!r}")
    return FORMATS[name]


def parts(fmt: Format, part: str = BOTH) -> tuple[Format, Format]:
    """(the layers' format, the LM head's format) when `fmt` is applied to `part`; the other part stays float32."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}; got {part!r}")
    layers = fmt if part != HEAD else FLOAT32
    head = fmt.head_format if part != LAYERS else FLOAT32
    return layers, head
