"""This machine's measured figures as every lesson writes them: one format for the copy bandwidth and one for the
matmul peak (`decoding.timing.machine` keeps the figure once per server), and the sentence that sets a bandwidth a
lesson measured on purpose, a decode step's or a kernel's, beside the machine's; and the machine's name as a line of
the page shows it. Plain numbers in, text out."""

import html
import re

WHERE = "the **Prefill vs decode** tab"
NOT_MEASURED = (
    "not yet set beside this machine's copy bandwidth, which is not measured on this server yet "
    f"(press **Measure** on {WHERE})"
)


# the most characters of a device's name a line shows: a Space's or a cloud machine's CPU names run to 80, and a
# longer one wrapped the timing tab's headline, pushing its roofline off a 1280x720 projector screen
NAME_LIMIT = 36
_NOISE = re.compile(r"\((?:R|TM|tm|r)\)|\bProcessor\b")


def device_label(name: str) -> str:
    """A device's name as a line shows it: /proc/cpuinfo's trademark marks and the word Processor left out, its
    thread count kept, the rest cut to `NAME_LIMIT` characters with an ellipsis. Its whole name goes in a title
    (`device_html`). 'Intel(R) Xeon(R) Processor @ 2.80GHz CPU, 1 thread' -> 'Intel Xeon @ 2.80GHz CPU, 1 thread'."""
    model, sep, threads = name.rpartition(", ")
    if not (sep and re.fullmatch(r"\d+ threads?", threads)):
        model, sep, threads = name, "", ""
    model = " ".join(_NOISE.sub(" ", model).split()) or model.strip()
    room = NAME_LIMIT - len(sep + threads)
    if len(model) > room:
        model = model[: room - 1].rstrip() + "…"
    return model + sep + threads


def device_html(name: str) -> str:
    """`device_label` in a span whose title is the whole name (a tap or a hover shows it)."""
    return f'<span title="{html.escape(name)}">{html.escape(device_label(name))}</span>'


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
