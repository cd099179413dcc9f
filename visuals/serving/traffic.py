"""Continuous batching, read from this server's own traffic, in words: who shared the passes and what they cost,
what the prefix cache saved, and the line under one step that says how its pass ran.

Decode is memory-bound: a pass reads every weight once, whether it computes the next token of one student or of
thirty. So the scheduler packs every waiting student's next token (and chunks of new prompts) into one pass, and
the pass grows only a little slower as it fills: tick time against batch size is the decode roofline, measured on
live traffic. Batched logits differ from a solo pass by float noise, so a pick whose top-two gap is within twice
that noise could have gone the other way. Ticks, summaries and the noise are `decoding.serving`'s plain data.

The charts are beside this file (ticks.py, cost.py, blocks.py) and the tab's view that holds them all (view.py); the
words here are HTML, as that view is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from decoding.nondeterminism.flips import flip_possible
from decoding.passes import IMPLS, KINDS, MODES, ORIGINS
from visuals.glossary import term
from visuals.words import count

if TYPE_CHECKING:
    from decoding.serving.prefix import PrefixStats
    from decoding.serving.scheduler import Noise

# a static run's one-token pass by its kind (decoding.passes.KINDS): always a pass of its own, no batchmate to warn of
STATIC_STEPS = {"static": "uncaptured", "captured": f"replayed as a {term('CUDA graph')}"}
# which implementation computed a pass's logits (decoding.passes.IMPLS), as the line under a step ends
IMPL_WORDS = {
    "modules": "transformers' Llama modules",
    "scripted": "the TorchScript copy of those modules (bit for bit the same)",
}
# where a copied pass's logits came from (decoding.passes.ORIGINS), for a "cached" pass
CACHED_FROM = {
    "pool": "your whole prompt was in the server's {prefix}, its keys and values copied in {ms} ms",
    "in flight": "the same prompt was being computed for another session in the same tick, its keys and values "
    "copied in {ms} ms",
    "shared": "one prefill of this prompt, run once for many runs of it, copied in {ms} ms",
    "computed": "your whole prompt was in the server's {prefix}, its keys and values copied in {ms} ms",
}
# the controls sit above the charts
NO_TRAFFIC = "No traffic yet: open simulated students above, or press Step in another tab"


def traffic_html(
    summary: dict, noise: Noise | None, holder_text: str | None = None, frozen: bool = False, server: str = ""
) -> str:
    """What the numbers say, in a few sentences; `holder_text` (who has the model now, HTML) is shown as given.
    `frozen`: the window ends when the class was stopped, and the page no longer refreshes it (a teacher reading
    the numbers out has them hold still), which the words say first. `server`: which replica of a lecture hall
    these numbers are from ("this server, 2 of 4"), said first: the class's other students step on the others."""
    window = f"{summary.get('window_s', 0):.0f}"
    lines = []
    if server:
        lines.append(f"<b>{server.capitalize()}</b>: its own traffic (the class's other students step on the others).")
    if frozen:
        lines.append(f"<b>Frozen at Stop:</b> the {window} s before it (tick Live to follow the traffic again).")
    which = f"those {window} s" if frozen else f"the last {window} s"
    if not summary.get("ticks"):
        lines.append(f"No forward passes in {which}.")
    else:
        n = summary["ticks"]
        lines.append(
            f"In {which}: {n} forward pass{'' if n == 1 else 'es'}, "
            f"{summary['mean_rows']:.1f} students per pass on average, "
            f"{num(summary['tokens_per_s'])} tokens/s for the whole server; "
            f"the model was busy {min(summary['busy'], 1.0):.0%} of the time."
        )
    by_rows = {int(r): ms for r, ms in summary.get("median_ms_by_rows", {}).items()}
    big = max(by_rows, default=0)
    if 1 in by_rows and big > 1:
        one = by_rows[1]
        lines.append(
            f"One pass for {big} students took {num(by_rows[big])} ms; one after another they would have "
            f"taken {big} × {num(one)} = {num(big * one)} ms: {shared_verdict(by_rows[big], big * one)} "
            f"(each time the median of {which})."
        )
    if noise is not None and noise.value == 0:
        lines.append(
            f"Batched logits are bit-identical to a solo pass ({noise.dtype}, measured on this server at "
            "start): sharing a pass cannot change a pick here."
        )
    elif noise is not None:
        lines.append(
            f"Batched logits differ from a solo pass by up to {term('batching noise', _small(noise.value))} "
            f"({noise.dtype}, measured on this "
            "server at start): a step whose top-two gap is within twice that could have picked the other token."
        )
    # who has the model now ends the paragraph: a line of its own pushed the charts' axes below a 720 px screen
    return f"<p>{' '.join([*lines, holder_text] if holder_text else lines)}</p>"


def pass_caption(
    rows: int,
    ms: float,
    mode: str,
    noise: float | None,
    gap: float | None = None,
    kind: str = "eager",
    server: str = "",
    impl: str = "",
    origin: str = "computed",
) -> str:
    """The note under one step: how its forward pass ran (`mode`, what batched it; `kind`, what ran; `origin`, where
    its logits came from: the words of decoding.passes), and whether a batchmate could have flipped its pick; `impl`
    (which implementation computed the logits; "" leaves it unsaid) and `server` (a lecture hall's replica, in words)
    end it."""
    if impl and impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    if origin not in ORIGINS:
        raise ValueError(f"origin must be one of {ORIGINS}, got {origin!r}")
    caption = _pass_caption(rows, ms, mode, noise, gap, kind, origin)
    if impl:
        caption += f" · run by {IMPL_WORDS[impl]}"
    return f"{caption} · on {server}" if server else caption


def _pass_caption(
    rows: int, ms: float, mode: str, noise: float | None, gap: float | None, kind: str, origin: str
) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind in STATIC_STEPS:
        return f"computed alone by the {term('static cache')}'s step, {STATIC_STEPS[kind]}: {num(ms)} ms"
    if mode == "alone":
        return f"computed alone, as you asked: {term('bit-exact with generate()')}, {num(ms)} ms"
    if mode == "lens":  # the lens panel's pass: the step chose from its logits, so its time is this step's
        return f"the lens pass, a pass of its own over this position with every layer's hidden state: {num(ms)} ms"
    if mode == "cached":
        return (
            "not computed: "
            + CACHED_FROM[origin].format(prefix=term("prefix cache"), ms=num(ms))
            + "; these are the logits its first computation got"
            + (f" (a pass shared by {rows} sessions)" if rows > 1 else " (a pass of its own)")
        )
    if mode == "prefix":
        text = (
            f"the start of your prompt came from the server's {term('prefix cache')} (copied, not computed), the rest "
            f"computed against it{f' with {rows - 1} others' if rows > 1 else ''}: {num(ms)} ms. That can differ "
            "from one pass over the whole prompt by float noise, as batching does"
        )
        if gap is not None and flip_possible(gap, noise):
            text += f" — the top two were {_small(gap)} apart, within that noise: this pick could have flipped"
        return text
    if origin == "fallback":
        return (
            "computed alone: the packed pass it was in failed, so the server undid it and ran each row alone: "
            f"{num(ms)} ms"
        )
    if mode == "solo" or rows <= 1:
        return f"computed alone (nobody else was stepping): {num(ms)} ms"
    others = rows - 1
    text = f"computed with {others} other session{'' if others == 1 else 's'}: batch {rows}, {num(ms)} ms"
    if gap is not None and flip_possible(gap, noise):
        text += (
            f" — the top two were {_small(gap)} apart, within the batching noise: "
            "a batchmate could have flipped this pick"
        )
    return text


def prefix_html(stats: PrefixStats | None, prefix_noise: float | None) -> str:
    """The prefix cache in a few sentences: how much prompt it saved, what its blocks cost, and what a block table
    (sharing in place, as vLLM does) would hold instead of our copies."""
    if stats is None or not stats.prompts:
        return f"<p><b>{term('prefix cache', 'Prefix cache')}:</b> no prompt has asked it yet.</p>"
    lines = [
        f"<b>{term('prefix cache', 'Prefix cache')}:</b> {stats.hit_rate:.0%} of prompt tokens came from it "
        f"({count(stats.reused_tokens, 'prompt token')} not computed, of {stats.prompt_tokens:,}); "
        f"{stats.prompts_hit} of {count(stats.prompts, 'prompt')} took at least one {term('KV block', 'block')}.",
        f"It holds {count(stats.blocks, 'block')} ({_mib(stats.pool_bytes)}). The sessions' own caches hold "
        f"{_mib(stats.session_bytes)}: with the pool, the server holds {_mib(stats.session_bytes + stats.pool_bytes)}, "
        f"against {_mib(stats.session_bytes)} without prefix caching, because each session gets its own copy of the "
        f"shared blocks. Shared in place through a block table, as vLLM does, the same sessions would hold "
        f"{_mib(stats.block_table_bytes)}.",
    ]
    if stats.copied_blocks:
        lines.append(f"Copying a block into a session's cache took {num(stats.copy_ms / stats.copied_blocks)} ms.")
    if prefix_noise:
        lines.append(
            f"A prompt that shares only its start computes the rest against copied blocks: its logits can differ "
            f"from one pass over the whole prompt by up to {_small(prefix_noise)} (measured at start)."
        )
    return f"<p>{' '.join(lines)}</p>"


def _mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.1f} MiB"


def shared_verdict(shared_ms: float, one_by_one_ms: float) -> str:
    """What the measured pair says, and no more: the shared pass's share of the one-after-another time."""
    share = shared_ms / one_by_one_ms
    if share < 1:
        return f"the shared pass took {share:.0%} of that ({1 - share:.0%} saved)"
    return f"the shared pass took {share:.0%} of that: sharing saved nothing in this window"


def num(x: float) -> str:
    """Whole numbers from 10 up, one decimal below: '464', '7.5'."""
    return f"{x:.0f}" if abs(x) >= 10 else f"{x:.1f}"


def _small(x: float) -> str:
    """A tiny gap in plain decimals, two significant digits: 3e-05 -> '0.00003'."""
    return np.format_float_positional(x, precision=2, unique=True, fractional=False, trim="-")
