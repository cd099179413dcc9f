"""An HTML view and the parts a page can patch it by: what a new step sends when it only added to the last view.

A Step adds one chip to the token strip and one column to the time chart; re-sending the whole strip and chart
every step made a run of n steps cost n² in bytes, in the server's building and in the page's parsing. A `Parts`
names the pieces of its HTML that change on their own:
- `strips`: a container (by CSS selector) whose children are a list of items: a chip, a chart's column or label;
- `slots`: a container whose whole inside is replaced (the chart's ticks, the strip's held-back text);
- `attrs`: one attribute of an element (the plot's range: `style="--lo:0;--hi:150"`);
and `shape` is everything else it was drawn with (which chart, how often a label is shown, the legend): when the
shape is the same, `changes(old, new)` lists what the page must do to turn the old view into the new one, else the
whole HTML is sent again.

A view made of several such views, side by side on the page (the step tab's chart, strip and stop line in one
element), is `joined`: each piece in an element of its own id, its changes made within that element, and a piece
whose shape changed sent whole there, the other pieces left as they are.

The changes are plain lists, applied by the page's script (ui/patch.py) in order:
`["append", selector, html]`, `["drop", selector, n]` (the last n children), `["shift", selector, n]` (the first n),
`["html", selector, html]` (the whole inside), `["attr", selector, name, value]`.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Parts:
    html: str  # the whole view
    shape: tuple = ()
    strips: dict[str, tuple[str, ...]] = field(default_factory=dict)
    slots: dict[str, str] = field(default_factory=dict)
    attrs: dict[tuple[str, str], str] = field(default_factory=dict)
    pieces: tuple[tuple[str, "Parts"], ...] = ()  # (element id, its view), when `joined`


def text(html: str) -> Parts:
    """A piece that changes only as a whole (a line of text, a chart redrawn every step)."""
    return Parts(html=html, shape=("text", html))


def joined(pieces: dict[str, "Parts | str"]) -> Parts:
    """One view of several pieces, each in a <div> with its id (a string is a `text` piece)."""
    parts = tuple((key, text(piece) if isinstance(piece, str) else piece) for key, piece in pieces.items())
    whole = "".join(f'<div id="{key}">{piece.html}</div>' for key, piece in parts)
    return Parts(html=whole, shape=("joined", tuple(key for key, _ in parts)), pieces=parts)


def changes(old: Parts | None, new: Parts) -> list[list] | None:
    """What turns the page's `old` view into `new`, in order; None when only the whole HTML will do (no old view, a
    new shape, or other parts)."""
    if old is not None and old.pieces and old.shape == new.shape:
        return [op for (key, was), (_, now) in zip(old.pieces, new.pieces) for op in _within(key, was, now)]
    if old is None or old.shape != new.shape or old.strips.keys() != new.strips.keys():
        return None
    if old.slots.keys() != new.slots.keys() or old.attrs.keys() != new.attrs.keys():
        return None
    out = []
    for (selector, name), value in new.attrs.items():
        if old.attrs[(selector, name)] != value:
            out.append(["attr", selector, name, value])
    for selector, inner in new.slots.items():
        if old.slots[selector] != inner:
            out.append(["html", selector, inner])
    for selector, items in new.strips.items():
        out += strip_changes(selector, old.strips[selector], items)
    return out


def _within(key: str, old: Parts, new: Parts) -> list[list]:
    """A piece's changes, made inside its element: its own, or its whole view there."""
    ops = changes(old, new)
    if ops is None:
        return [["html", f"#{key}", new.html]]
    return [[op[0], f"#{key} {op[1]}".strip(), *op[2:]] for op in ops]


def strip_changes(selector: str, old: tuple[str, ...], new: tuple[str, ...]) -> list[list]:
    """The fewest items sent to turn strip `old` into `new`: keep their common start and replace the rest, or (a
    window that moved on) drop items from the front and add the new ones at the end."""
    common = 0
    for a, b in zip(old, new):
        if a != b:
            break
        common += 1
    best = (len(new) - common, [["drop", selector, len(old) - common]] if len(old) > common else [], new[common:])
    for gone in range(1, len(old)):
        kept = len(old) - gone
        if kept <= len(new) and len(new) - kept < best[0] and old[gone:] == new[:kept]:
            best = (len(new) - kept, [["shift", selector, gone]], new[kept:])
            break  # the first window that fits keeps the most
    _, removal, added = best
    return removal + ([["append", selector, "".join(added)]] if added else [])
