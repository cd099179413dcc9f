"""This machine's measured figures as every lesson writes them: one format for the copy bandwidth and one for the
matmul peak (`decoding.timing.machine` keeps the figure once per server), and the sentence that sets a bandwidth a
lesson measured on purpose, a decode step's or a kernel's, beside the machine's. Plain numbers in, text out."""

WHERE = "the **Prefill vs decode** tab"
NOT_MEASURED = (
    "not yet set beside this machine's copy bandwidth, which is not measured on this server yet "
    f"(press **Measure** on {WHERE})"
)


def machine_gbs(gbs: float) -> str:
    """This machine's copy bandwidth: '12.1 GB/s', wherever it is quoted."""
    return f"{gbs:.1f} GB/s"


def machine_gflops(tflops: float) -> str:
    """This machine's matmul peak, measured in TFLOP/s, written in GFLOP/s: '96 GFLOP/s'."""
    return f"{tflops * 1e3:.0f} GFLOP/s"


def measured_when(when: str | None, probed: bool) -> str:
    """Where the machine's figure on a chart came from: this run's probe, or the figure kept on this server."""
    if probed or not when:
        return "probed now"
    return f"probed at {when}"  # by an earlier measurement on this server: every lesson reads the same figure


def beside_machine(gbs: float, machine: float | None) -> str:
    """A bandwidth a lesson measured on purpose, set beside the machine's copy bandwidth when one is kept:
    '75% of this machine's 12.1 GB/s copy bandwidth', or that it has not been measured yet and where to."""
    if not machine:
        return NOT_MEASURED
    return f"{gbs / machine:.0%} of this machine's {machine_gbs(machine)} copy bandwidth"
