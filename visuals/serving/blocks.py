"""The prefix cache, drawn as what each live session's KV cache is made of: its prompt's blocks, copied from the pool
(shared) or computed by the session itself, each labelled with its short hash, then the tokens it generated.

Sessions holding the same blocks sit next to each other, so shared hashes line up in a column. An HTML chart of lanes
(visuals.chart.Lanes), as it is redrawn on every live refresh; takes `decoding.serving.prefix.SessionBlocks`, no
torch, no gradio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from visuals.chart import Key, Lane, Lanes, Span, empty_html, lanes_html, nice_axis
from visuals.theme import KEPT, OTHER, PREFILL

if TYPE_CHECKING:
    from decoding.serving.prefix import SessionBlocks

SHORT_HASH = 6  # hex digits of a block's hash on the chart
BLOCK_ROWS = 12  # sessions drawn; the title counts the rest
# a block copied from the pool (a dashed edge: a copy), one computed by the session, its generated tokens
SHARED, COMPUTED, GENERATED = "copied from the pool (shared)", "computed by this session", "generated"
LOOKS = {SHARED: (KEPT, "dashed"), COMPUTED: (PREFILL, "tint"), GENERATED: (OTHER, "tint")}
BLANK = "No session holds a cache yet: open simulated students above, or press Prefill"


def blocks_figure(sessions: list[SessionBlocks]) -> str:
    """Each live session's KV cache as its blocks, one lane per session: prompt blocks copied from the pool, prompt
    blocks it computed, then what it generated. The newest BLOCK_ROWS sessions are drawn, those holding the same
    blocks next to each other."""
    if not sessions:
        return empty_html(BLANK, 160)
    # the newest sessions (the class just opened, a Prefill just pressed): `sessions` comes oldest first
    ordered = sorted(sessions[-BLOCK_ROWS:], key=lambda s: (s.hashes, s.tokens))
    lanes = tuple(Lane(f"session {i + 1}", tuple(_spans(s))) for i, s in enumerate(ordered))
    more = len(sessions) - len(ordered)
    title = "Each session's KV cache, block by block" + (f" ({more} more sessions not drawn)" if more else "")
    x = nice_axis(max(s.tokens for s in ordered) or 1, title="positions in the cache (a prompt block is 16)")
    legend = tuple(Key(name, *LOOKS[name]) for name in (SHARED, COMPUTED, GENERATED))
    return lanes_html(Lanes(lanes, x, title=title, legend=legend), cls="serving-blocks-chart")


def _spans(s: SessionBlocks) -> list[Span]:
    """A session's blocks in order, each with its short hash (in `data`, after its start), then its own tokens."""
    spans, start = [], 0
    for i, (h, n) in enumerate(zip(s.hashes, s.lengths)):
        kind = SHARED if i < s.copied else COMPUTED
        where = "in the pool" if s.pooled[i] else "freed from the pool"
        short = h[:SHORT_HASH]
        spans.append(_span(kind, start, n, short, f"block {short}: {n} tokens, {where}", (short,)))
        start += n
    if s.tokens > start:
        left = s.tokens - start
        spans.append(_span(GENERATED, start, left, "", f"{left} generated tokens"))
    return spans


def _span(kind: str, start: int, length: int, text: str, hover: str, data: tuple = ()) -> Span:
    colour, look = LOOKS[kind]
    return Span(kind, start, length, colour, look, text=text, hover=hover, data=data)
