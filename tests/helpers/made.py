"""Hand-made records that several tests read: a timing measurement of a made-up CPU, the kernel timings of three
made-up kernels, the weight formats' speed rows, each-strategy-alone panels and a step's candidates. No model, no
clock: every number a sentence or a chart quotes is one of these."""

from decoding.quantization.kernels import REFERENCE
from decoding.sandbox import Alone
from decoding.timing.limits import Probe, Sample
from decoding.timing.shape import ModelShape
from decoding.timing.sweeps import Measurements, TimedLoop
from decoding.trace import Candidate, Step

SHAPE = ModelShape(
    body_params=100_000_000, head_params=25_000_000, layers=4, q_heads=4, kv_heads=2, head_dim=16, bytes_per_param=4
)


def measured(**parts) -> Measurements:
    m = Measurements("cpu", "a test CPU", "float32", "tiny", "tiny model", "quick", SHAPE, 8 * 10**9, seconds=12.0)
    for name, value in parts.items():
        setattr(m, name, value)
    return m


FULL = dict(
    bandwidth=Probe(10.0, "GB/s", [1.0], 1e9, "copy"),
    peak=Probe(0.1, "TFLOP/s", [1.0], 1e9, "matmul"),
    prefill=[Sample(16, [200.0]), Sample(64, [640.0])],
    decode=[Sample(16, [50.0]), Sample(64, [60.0])],
    naive=TimedLoop(ms=[100.0, 200.0, 300.0], context=[4, 5, 6], ids=[1, 2, 3]),
    cached=TimedLoop(ms=[100.0, 100.0, 100.0], context=[4, 5, 6], ids=[1, 2, 3]),
    batch=[Sample(1, [20.0]), Sample(4, [40.0])],
    batch_context=8,
    request=TimedLoop(ms=[100.0, 20.0, 20.0, 20.0], context=[8, 9, 10, 11], ids=[1, 2, 3, 4]),
)

KERNEL_ROWS = [
    dict(kernel=REFERENCE, format="float32", layers_ms=40.0, layers_mb=400.0, head_ms=10.0, head_mb=100.0, used=True),
    dict(kernel="slow int8", format="int8", layers_ms=80.0, layers_mb=100.0, head_ms=20.0, head_mb=25.0, used=False),
    dict(
        kernel="fast", format="int8-activations", layers_ms=20.0, layers_mb=100.0, head_ms=2.0, head_mb=25.0, used=True
    ),
]

SPEED_ROWS = [
    dict(
        name="float32",
        kernel="F.linear",
        simulated=False,
        bytes=538e6,
        decode_ms=70.0,
        prefill_ms=300.0,
        decode_runs_ms=[68.0, 70.0, 72.0],  # a spread of 4/70 = 5.7%: the widest of these rows'
        prefill_runs_ms=[296.0, 300.0, 304.0],
    ),
    dict(
        name="int8",
        kernel="simulated: rounded weights, float32 compute",
        simulated=True,
        bytes=135e6,
        decode_ms=71.0,
        prefill_ms=301.0,
        decode_runs_ms=[70.0, 71.0, 72.0],
        prefill_runs_ms=[298.0, 301.0, 304.0],
    ),
    dict(
        name="int8-activations",
        kernel="fbgemm quantized.linear_dynamic",
        simulated=False,
        bytes=135e6,
        decode_ms=40.0,
        prefill_ms=150.0,
        decode_runs_ms=[39.0, 40.0, 41.0],
        prefill_runs_ms=[148.0, 150.0, 152.0],
    ),
]


def alone(name, keeps, value=None, kept=None, mass=0.9, rest=(0, 0.0, 0.0)):
    before = [0.5, 0.3, 0.1, 0.1][: len(keeps)]
    n_rest, rest_kept, rest_removed = rest
    return Alone(
        name=name,
        setting=f"{name} = {value}",
        value=value,
        usual=False,
        kept=sum(keeps) if kept is None else kept,
        vocab=len(keeps) + n_rest,
        mass=mass,
        ids=list(range(len(keeps))),
        before=before,
        after=[b if k else 0.0 for b, k in zip(before, keeps)],
        keeps=list(keeps),
        rest=n_rest,
        rest_kept=rest_kept,
        rest_removed=rest_removed,
        rest_after=rest_kept,
    )


RESULTS = [
    alone("greedy", [True, False, False, False], mass=0.5),
    alone("top_k", [True, True, False, False], value=2, mass=0.8),
    alone("top_p", [True, True, True, False], value=0.9, mass=0.9, rest=(10, 0.05, 0.02)),
]


def make_step(top, token_id=1, forced=False, settings=None, index=0) -> Step:
    cands = [
        Candidate(id=i, text=t, logit=lg, prob_before=p, prob_after=pa, removed_by=r) for i, t, lg, p, pa, r in top
    ]
    chosen = next(c for c in cands if c.id == token_id)
    return Step(
        index=index,
        phase="decode",
        token_id=token_id,
        token_text=chosen.text,
        prob_before=chosen.prob_before,
        prob_after=chosen.prob_after,
        rank=1 + sum(c.prob_before > chosen.prob_before for c in cands),
        forced=forced,
        top=cands,
        stages=[("top_k", 2)],
        kept_mass=0.7,
        entropy_bits=1.5,
        settings={"temperature": 1.0, "top_k": 2, "top_p": 0.6, "min_p": 0.1, **(settings or {})},
        forward_ms=50.0,
        sample_ms=1.0,
        kv_bytes=0,
        context_len=5,
    )


# the model's probabilities sum to 0.7 over these four: the other 0.3 is elsewhere in the vocabulary
TOP = [
    (1, " Paris", 5.0, 0.4, 0.6, None),
    (2, " the", 4.0, 0.2, 0.4, None),
    (3, " a", 3.0, 0.06, 0.0, "top_k"),
    (4, "<b>", 2.0, 0.04, 0.0, "top_k"),
]
