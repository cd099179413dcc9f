"""The headline over the repetition section's chart: what was run, on what, and how long it took. The findings under
the chart are `visuals.beams.repetition.findings_markdown`. Plain data in (`decoding.beams.repetition`'s experiment)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from decoding.beams.repetition import RepetitionExperiment


def headline(exp: RepetitionExperiment, device: str) -> str:
    """Where it ran, how many generations of how many tokens, the seeds, and whether it was cancelled."""
    runs = sum(len(v) for v in exp.runs.values())
    text = (
        f"Measured on **{device}**: {runs} generations of up to {exp.max_new_tokens} tokens in {exp.seconds:.0f} s "
        f"(seed {exp.seeds[0]}" + (f" to {exp.seeds[-1]} for the sampled settings" if len(exp.seeds) > 1 else "") + ")."
    )
    cancelled = " **Cancelled**: every setting's tokens so far are shown (the same number for each)."
    return text + (cancelled if exp.cancelled else "")
