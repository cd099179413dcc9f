"""The back-of-envelope calculator: a model, a context length and a machine in; the roofline's answers out
(the weights' bytes, the fastest a decode step can be, the KV cache per sequence, how many sequences fit).

Its first row is the loaded model on this machine, with its measured decode step; the others are the references'
worked examples. The arithmetic is decoding.timing.roofline's.
"""

from dataclasses import asdict, dataclass

from decoding.timing.roofline import GB, floor_ms, kv_bytes_per_sequence, sequences_that_fit, weight_bytes


@dataclass(frozen=True)
class CalculatorRow:
    """One back-of-envelope question: this model, this much context, on this hardware."""

    model: str
    params_b: float  # parameters read per decode step, billions
    bytes_per_param: float  # 2 for FP16/BF16, 4 for FP32, 1 for INT8
    layers: int
    kv_heads: int
    head_dim: int
    context: int  # tokens held in each sequence's KV cache
    hardware: str
    bandwidth_gbs: float
    memory_gb: float  # total accelerator memory
    overhead_gb: float = 3.0  # runtime context, activations (the references use 3 GB)
    measured_ms: float | None = None  # a measured decode step, when we have one


def calculate(row: CalculatorRow) -> dict:
    """The row's inputs followed by what follows from them."""
    weights = weight_bytes(row.params_b * 1e9, row.bytes_per_param)
    kv = kv_bytes_per_sequence(row.layers, row.kv_heads, row.head_dim, row.context, row.bytes_per_param)
    floor = floor_ms(weights, row.bandwidth_gbs)
    fits = sequences_that_fit(row.memory_gb * GB, weights, kv, row.overhead_gb * GB)
    measured = row.measured_ms if row.measured_ms is not None and row.measured_ms > 0 else None
    return asdict(row) | {
        "weights_gb": weights / GB,
        "floor_ms": floor,
        "max_tokens_per_s": 1e3 / floor,
        "kv_gb_per_seq": kv / GB,
        "sequences_fit": fits,
        "mbu": floor / measured if measured else None,
    }


# the references' worked examples (LLaMA-2 shapes: 7B has 32 layers × 32 KV heads, 70B has 80 layers × 8 KV heads)
LLAMA2_7B = dict(model="7B FP16 (LLaMA-2-7B)", params_b=7, bytes_per_param=2, layers=32, kv_heads=32, head_dim=128)
LLAMA2_70B = dict(model="70B FP16 (LLaMA-2-70B)", params_b=70, bytes_per_param=2, layers=80, kv_heads=8, head_dim=128)
REFERENCE_ROWS = (
    CalculatorRow(**LLAMA2_7B, context=4096, hardware="NVIDIA A10", bandwidth_gbs=600, memory_gb=24),
    CalculatorRow(**LLAMA2_7B, context=4096, hardware="NVIDIA A100 80GB", bandwidth_gbs=2039, memory_gb=80),
    CalculatorRow(**LLAMA2_70B, context=4096, hardware="NVIDIA H100 SXM", bandwidth_gbs=3350, memory_gb=80),
    CalculatorRow(**LLAMA2_70B, context=4096, hardware="2 × A100 80GB", bandwidth_gbs=2 * 2039, memory_gb=160),
)


def measured_row(m, context: int = 1024) -> CalculatorRow:
    """The calculator's first row: the loaded model on this machine, with its measured decode step."""
    s = m.shape
    return CalculatorRow(
        model=f"{m.model} {m.dtype} (loaded)",
        params_b=round(s.params_read / 1e9, 4),
        bytes_per_param=s.bytes_per_param,
        layers=s.layers,
        kv_heads=s.kv_heads,
        head_dim=s.head_dim,
        context=context,
        hardware=f"this machine ({m.device})",
        bandwidth_gbs=round(m.bandwidth.value, 1),
        memory_gb=round(m.memory_bytes / GB, 1),
        measured_ms=round(m.decode[0].median_ms, 2) if m.decode else None,
    )
