"""The weight formats the lesson compares, and what each one stores per weight.

float32 is the reference: the bundled Q4_1 GGUF as transformers dequantizes it. The others are rounded from it with
round-to-nearest, no calibration data: bfloat16 (8 bits of mantissa dropped), int8 weight-only (one scale per output
channel), int8 with the activations quantized too (one scale per tensor, computed on the fly for each input: the
counter-example, see LLM.int8(), https://arxiv.org/abs/2208.07339), and int4 weight-only in groups along the input
(a scale and a minimum per group, Q4_1's grid). Group sizes must divide the hidden size (576 for SmolLM2): 32 or 64.
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

    def nbytes(self, out_features: int, in_features: int) -> int:
        """Bytes a matrix (out × in) takes in this format: the weights and their scales."""
        weights = out_features * in_features * self.weight_bits // 8
        if self.scale_bytes == 0:
            return weights
        groups = in_features // self.group if self.group else 1
        return weights + out_features * groups * self.scale_bytes


FORMATS = {
    f.name: f
    for f in (
        Format("float32", "float32 (reference)", 32),
        Format("bfloat16", "bfloat16", 16),
        Format("int8", "int8 weight-only, per channel", 8, scale_bytes=4),
        Format("int8-activations", "int8 weights + int8 activations (per tensor)", 8, scale_bytes=4, activations=True),
        Format("int4", "int4 weight-only, group 32 (Q4_1's grid)", 4, group=32, scale_bytes=8),
        Format("int4-g64", "int4 weight-only, group 64", 4, group=64, scale_bytes=8),
    )
}
SERVED = ("float32", "bfloat16", "int8", "int4")  # what --weights accepts


def get_format(name: str) -> Format:
    if name not in FORMATS:
        raise ValueError(f"weights must be one of {', '.join(FORMATS)}; got {name!r}")
    return FORMATS[name]
