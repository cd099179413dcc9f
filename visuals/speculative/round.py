"""One speculative round as HTML chips: the context's end (prompt lookup's matched n-gram and what followed it
marked), the K guesses judged one by one, then the bonus token. Colours are the theme's (see
visuals.speculative.charts). No torch, no gradio."""

import html

from decoding.stages import TOP_K, TYPICAL
from visuals.theme import CHOSEN, FORCED, KEPT, REMOVED
from visuals.tokens import visible_token

DRAFT = FORCED
REJECTED = REMOVED[TOP_K.name]
MATCH = REMOVED[TYPICAL.name]  # yellow: the n-gram prompt lookup matched
CONTEXT_TAIL, MATCH_AROUND = 14, 6  # context tokens shown before the guesses, and around a lookup match


def _tint(colour: str, alpha: float) -> str:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _chip(text: str, style: str, title: str = "", note: str = "") -> str:
    note_html = f"<span class='speculative-note'>{_esc(note)}</span>" if note else ""
    chip = f"<span class='speculative-chip {style}' title='{html.escape(title)}'>"
    return f"{chip}{_esc(visible_token(text))}{note_html}</span>"


def round_html(context: list[str], rnd, exit_layer: int | None = None) -> str:
    """The context's end (with prompt lookup's matched n-gram and what followed it marked), then the K guesses as
    ghost chips judged one by one, then the bonus token. `context`: the token texts before the round."""
    marks = {}
    if rnd.match is not None:
        m = rnd.match
        for i in range(m.start, m.start + m.size):
            marks[i] = "speculative-match"
        for i in range(m.follow, min(m.follow + len(rnd.drafted), len(context))):
            marks[i] = "speculative-source"
        for i in range(len(context) - m.size, len(context)):
            marks[i] = "speculative-match"
    shown = set(range(max(0, len(context) - CONTEXT_TAIL), len(context)))
    if rnd.match is not None:
        lo = max(0, rnd.match.start - MATCH_AROUND)
        shown |= set(range(lo, min(len(context), rnd.match.follow + len(rnd.drafted) + MATCH_AROUND)))
    parts, last = [], -1
    for i in sorted(shown):
        if i != last + 1:
            parts.append("<span class='speculative-gap'>…</span>")
        parts.append(_chip(context[i], marks.get(i, "speculative-ctx"), f"position {i}"))
        last = i
    guesses = []
    for c in rnd.checks:
        if c.draft_id is None:
            continue
        style = {True: "speculative-ok", False: "speculative-no", None: "speculative-skip"}[c.accepted]
        mark = {True: "✓", False: "✗", None: "·"}[c.accepted]
        note = f"{mark} p {c.p:.2f}" + (f" q {c.q:.2f}" if exit_layer else "")
        guesses.append(
            _chip(
                c.draft_text,
                f"speculative-ghost {style}",
                f"guess {c.index + 1}: target argmax {c.target_text!r}",
                note,
            )
        )
    source = f"first {exit_layer} layers" if exit_layer else ("lookup: no match" if rnd.match is None else "lookup")
    bonus = _chip(rnd.bonus_text, "speculative-bonus", f"the target's own token ({rnd.bonus_from})", "+1 target")
    return (
        f"<div class='speculative-round'><div class='speculative-line'>{''.join(parts)}</div>"
        f"<div class='speculative-line'><span class='speculative-label'>{_esc(source)} →</span>"
        f"{''.join(guesses) or '<span class=speculative-gap>no guesses</span>'}"
        f"<span class='speculative-label'>then</span>{bonus}"
        f"</div></div>"
    )


CSS = f"""
.speculative-round {{ font-size: 1.05rem; line-height: 2.4; }}
.speculative-line {{ display: flex; flex-wrap: wrap; align-items: center; gap: 4px; }}
.speculative-chip {{ display: inline-block; padding: 0 6px; border-radius: 6px; border: 1px solid rgba(128,128,128,.35);
  font-family: ui-monospace, monospace; white-space: pre; line-height: 1.7; }}
.speculative-note {{ display: block; font-size: calc(12px * var(--lab-type, 1)); line-height: 1.1; opacity: .85;
  text-align: center; }}
.speculative-ctx {{ opacity: .8; }}
.speculative-match {{ background: {_tint(MATCH, 0.55)}; border-color: #C8B400; }}
.speculative-source {{ border: 2px solid {DRAFT}; }}
.speculative-ghost {{ border: 2px dashed {DRAFT}; }}
.speculative-ok {{ background: {_tint(KEPT, 0.25)}; border-color: {KEPT}; }}
.speculative-no {{ background: {_tint(REJECTED, 0.25)}; border-color: {REJECTED}; text-decoration: line-through; }}
.speculative-skip {{ opacity: .45; }}
.speculative-bonus {{ background: {_tint(CHOSEN, 0.45)}; border: 2px solid {CHOSEN}; font-weight: 700; }}
.speculative-label, .speculative-gap {{ opacity: .7; padding: 0 4px; }}
/* the round's two charts side by side while each has 260 px, else one above the other (a phone) */
.speculative-charts {{ display: grid; gap: 8px 16px; margin: 6px 0;
  grid-template-columns: repeat(auto-fit, minmax(min(260px, 100%), 1fr)); }}
.speculative-words > div {{ margin: 6px 0; }}
.speculative-judged .lc-x {{ display: none; }}  /* the guesses are named once, under the verdicts */
/* the run: its words and charts beside its timing while each has 400 px; its rounds beside its positions */
.speculative-run-view {{ display: grid; gap: 8px 24px;
  grid-template-columns: repeat(auto-fit, minmax(min(400px, 100%), 1fr)); }}
.speculative-run-charts {{ display: grid; gap: 8px;
  grid-template-columns: repeat(auto-fit, minmax(min(220px, 100%), 1fr)); }}
"""
