"""The sentences under the batching lab's charts, computed from the run (a BatchingExperiment or a Tally).

They never credit one cause with another's effect: padding only in the "padded" condition, the kernels'
batch shapes in both, and every number they quote is read off this run. Plain data in (`decoding.nondeterminism`'s
BatchingExperiment and Tally, and its list of causes); no torch here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from decoding.nondeterminism.causes import CAUSES, causes
from decoding.nondeterminism.flips import flip_possible
from visuals.glossary import glossed
from visuals.nondeterminism import batches as vis

if TYPE_CHECKING:
    from decoding.nondeterminism.experiment import BatchingExperiment
    from decoding.nondeterminism.tally import Tally

PRECISION = {"float32": "24", "bfloat16": "8", "float16": "11"}  # significant bits of the mantissa


def _gap_words(gap: float, dtype: str) -> str:
    if gap > 0:
        return f"where solo's top-1/top-2 gap was {gap:.3g}"
    return f"where solo's top two logits were exactly tied in {dtype} (gap 0: solo's argmax took the first of the two)"


def _batches(sizes: list[int]) -> str:
    return f"Batch {sizes[0]}" if len(sizes) == 1 else f"Batches {', '.join(map(str, sizes[:-1]))} and {sizes[-1]}"


def _diverged(rows) -> list:
    return [r for r in rows if r.first_divergence is not None]


def headline(exp: BatchingExperiment) -> str:
    div = _diverged(exp.rows)
    sizes = ", ".join(str(r.batch_size) for r in exp.rows)
    text = (
        f"**{exp.model}** on **{exp.device}** in **{exp.dtype}**, condition **{exp.condition}**: "
        f"{exp.new_tokens} new tokens, greedy, alone and in batches of {sizes}, in {exp.seconds:.0f} s. "
    )
    cause = (
        "padding and batch-size-dependent kernels together (the *padded* condition; *same-length* separates them)"
        if exp.condition == "padded"
        else "batch-size-dependent kernels alone (no padding in *same-length*)"
    )
    if not div:
        return text + f"**Every batch wrote exactly the solo text.** Causes in play: {cause}."
    first = min(div, key=lambda r: r.first_divergence)
    return text + (
        f"**{len(div)} of {len(exp.rows)} batch sizes wrote a different text**; the earliest, batch "
        f"{first.batch_size}, at token {first.first_divergence + 1}. Cause: {cause}."
    )


def texts_caption(exp: BatchingExperiment) -> str:
    div = _diverged(exp.rows)
    if not div:
        return "Row 0 of every batch chose the same token as the solo run at every step."
    # batches that flipped the same way at the same token share one sentence
    groups: dict[tuple, list[int]] = {}
    for r in div:
        d = r.first_divergence
        groups.setdefault((d, r.token_texts[d], r.gap[d], r.noise[d]), []).append(r.batch_size)
    parts = [
        f"{_batches(sizes)} diverged at token {d + 1}: chose {token!r} instead of "
        f"{exp.solo.token_texts[d]!r}, {_gap_words(gap, exp.dtype)}, and the batch moved the logits by up to "
        f"{noise:.3g}."
        for (d, token, gap, noise), sizes in groups.items()
    ]
    return " ".join(parts) + " After that token the two texts are different contexts, and each goes its own way."


def noise_caption(exp: BatchingExperiment) -> str:
    top = max(exp.rows, key=lambda r: r.max_noise)
    zero = [r.batch_size for r in exp.rows if r.max_noise == 0]
    text = []
    if top.max_noise > 0:
        text.append(f"The largest noise was {top.max_noise:.3g} (batch {top.batch_size}).")
    if _diverged(exp.rows):
        text.append(
            "A line ends at its first divergence (★): after it the batch and solo have read different tokens, "
            "so their logits are no longer the same computation."
        )
    if zero:
        text.append(f"{_batches(zero)}: bit-identical to solo at every step (the bottom line).")
    twins: dict[tuple, list[int]] = {}
    for r in exp.rows:
        twins.setdefault(tuple(r.noise), []).append(r.batch_size)
    for sizes in twins.values():
        if len(sizes) > 1 and sizes != zero:
            text.append(
                f"{_batches(sizes)} had exactly the same noise at every step: their lines lie on top of each other."
            )
    ties = [str(i + 1) for i, g in enumerate(exp.solo.gap) if g <= 0]
    if ties:
        text.append(
            f"At token {', '.join(ties)} solo's top two logits were exactly tied (the dotted line breaks there): "
            "the smallest noise can flip such a token."
        )
    return " ".join(text)


def scatter_caption(exp: BatchingExperiment) -> str:
    points = vis.scatter_points(exp.rows)
    if not points:
        return ""
    zero = sum(p["noise"] == 0 for p in points)
    below = [p for p in points if flip_possible(p["gap"], p["noise"])]
    flips = [p for p in points if p["flip"]]
    text = (
        f"{len(points)} tokens compared across {len(exp.rows)} batch sizes; {len(below)} had a gap no larger than "
        f"twice the noise (below the dashed line), and {len(flips)} of those flipped (★)."
    )
    if zero:
        text += f" {zero} had noise exactly 0 (the grey strip at the left): nothing there could flip."
    calm = [p for p in below if not p["flip"]]
    if calm:
        text += (
            f" {len(calm)} tokens below the line kept their argmax: the line says where a flip is possible, not "
            "certain; the noise must also push the top two logits in opposite directions."
        )
    moved = [p for p in points if p["noise"] > 0]
    if moved and not below:
        closest = min(moved, key=lambda p: p["gap"] / p["noise"])
        text += (
            f" The closest call: batch {closest['batch_size']}, token {closest['step'] + 1}, gap {closest['gap']:.3g} "
            f"against noise {closest['noise']:.3g}; the noise would have to be "
            f"{closest['gap'] / (2 * closest['noise']):.3g}× larger to flip it."
        )
    return text


CAUSES_HEAD = "### Why the text changes\nThe causes the references list, and which of them this run exercised.\n\n"


def causes_markdown(exp: BatchingExperiment | None = None) -> str:
    """The references' causes (decoding.nondeterminism.causes) as a table, with a column saying whether (and how)
    this run exercised each."""
    verdicts = ["—"] * len(CAUSES) if exp is None else _verdicts(CAUSES, exp, set(causes(exp)))
    rows = [
        f"| **{n.capitalize()}** | {glossed(what, 'matmul')} | {v} |" for (n, what), v in zip(CAUSES.items(), verdicts)
    ]
    return CAUSES_HEAD + "| cause | what it is | this run |\n|---|---|---|\n" + "\n".join(rows)


def _verdicts(names: dict[str, str], exp: BatchingExperiment, used: set[str]) -> list[str]:
    """One verdict per cause, in its order; 'yes' only where `used` says so."""
    noise = max((r.max_noise for r in exp.rows), default=0.0)
    seen = f"logits moved by up to {noise:.3g}" if noise else "no logit moved at all: bit-identical"
    why = {
        "non-associative sums": "every other cause works through it",
        "batch-size-dependent kernels": "mixed with padding here: run *same-length* to see it alone"
        if exp.condition == "padded"
        else f"the only cause here (no padding): {seen}",
        "padding": f"batchmates of other lengths; {seen}",
        "precision boundaries": f"{exp.dtype} keeps {PRECISION.get(exp.dtype, '?')} significant bits",
        "tensor-parallel reduction order": f"one device ({exp.device})",
        "mixture-of-experts routing": "a dense model: every token uses every weight",
    }
    no = {
        "non-associative sums": "nothing moved: every sum came out bit-identical",
        "padding": "every row is a copy of the prompt, nothing is padded",
        "precision boundaries": "float32: the finest rounding steps offered here (24 bits)",
    }
    return [
        f"**yes**: {why.get(name, '')}" if name in used else f"no: {no.get(name, why.get(name, ''))}" for name in names
    ]


def fix_caption(exp: BatchingExperiment) -> str:
    if not exp.invariant_rows:
        return "*Batch-invariant mode was off for this run: tick it and press Run.*"
    same = [r for r in exp.invariant_rows if r.first_divergence is None]
    zero = all(v == 0 for r in exp.invariant_rows for v in r.noise)
    t = exp.tokens_per_s
    text = (
        f"With batch-invariant mode, {len(same)} of {len(exp.invariant_rows)} batch sizes wrote the solo text, and "
        f"the noise was {'exactly 0 at every step' if zero else 'not zero somewhere: a bug worth reporting'}. "
    )
    if t.get("batched") and t.get("invariant"):
        ratio = t["batched"] / t["invariant"]
        cost = f"{ratio:.1f}× slower" if ratio >= 1 else f"{1 / ratio:.1f}× faster here (timing noise or warm-up)"
        text += (
            f"Throughput on the same batch of {t['batch_size']}: **{t['invariant']:.0f} tok/s** batch-invariant vs "
            f"**{t['batched']:.0f} tok/s** batched, {cost}, on {exp.device}, {exp.dtype}. Here each row is "
            "computed alone with batch-1 shapes, which gives up batching; production batch-invariant kernels keep "
            "the batch and fix the reduction order instead, at a smaller cost."
        )
    return text


def tally_caption(tally: Tally, sizes: int) -> str:
    per = "; ".join(f"“{_short(p['prompt'])}”: {p['distinct']} distinct in {p['runs']} runs" for p in tally.per_prompt)
    return (
        f"{tally.runs} greedy runs ({len(tally.per_prompt)} prompts, each alone and as row 0 of {sizes - 1} batch "
        f"sizes × 2 conditions) gave {tally.distinct} distinct completions; {tally.most_common_share:.0%} of the "
        f"runs gave their prompt's most common one. Per prompt: {per}. The runs differ only in their batchmates, so "
        "every extra completion is the batch's doing. (The references cite 1,000 runs at temperature 0 on a GPU "
        f"giving 80 distinct completions.) {tally.seconds:.0f} s."
    )


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[:width] + "…"
