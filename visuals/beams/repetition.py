"""Repetition loops on a chart and in the texts: how much of each setting's output repeated itself.

Every function takes the plain rows of `decoding.beams.repetition.RepetitionExperiment.summaries()` (dicts: label,
rep3, rep4, their (min, max) over seeds, loop, reuse, words, tokens, mask ...) and returns a plotly
Figure, an HTML string or Markdown; no torch here. Repeated spans are marked in the text, never by
colour alone: a dotted underline goes with the shading.
"""

import html

import plotly.graph_objects as go

from visuals.theme import SERIES, TEXT, empty_figure, styled

REPEAT = "rgba(230,159,0,0.38)"  # the shading of repeated spans (orange, light enough for black or white text)


def repetition_figure(rows: list[dict], title: str = "") -> go.Figure:
    """Grouped bars: share of repeated 3-grams and 4-grams per setting, the loop start written above."""
    if not rows:
        return empty_figure("Press Run to generate with each setting and measure its repetition")
    labels = [r["label"] for r in rows]
    fig = go.Figure()
    for n, colour in ((3, SERIES[0]), (4, SERIES[1])):
        values = [100 * r[f"rep{n}"] for r in rows]
        # whiskers only where several seeds ran: the lowest and highest seed
        low = [v - 100 * r[f"rep{n}_range"][0] for v, r in zip(values, rows)]
        high = [100 * r[f"rep{n}_range"][1] - v for v, r in zip(values, rows)]
        several = any(r["runs"] > 1 for r in rows)
        fig.add_bar(
            x=labels,
            y=values,
            name=f"repeated {n}-grams",
            marker_color=colour,
            marker_pattern_shape="" if n == 3 else "/",
            error_y={"type": "data", "array": high, "arrayminus": low, "visible": several, "color": TEXT},
            text=[f"{v:.0f}%" for v in values],
            textposition="outside",
            cliponaxis=False,
            customdata=[[r["runs"]] for r in rows],
            hovertemplate=f"%{{x}}: %{{y:.1f}}% of {n}-grams had appeared before (mean of %{{customdata[0]}} "
            "run(s))<extra></extra>",
        )
    top = max(100 * max(r["rep3"], r["rep4"]) for r in rows)
    for r in rows:
        fig.add_annotation(
            x=r["label"],
            y=top * 1.18 + 12,
            text=loop_label(r),
            showarrow=False,
            font={"size": 13, "color": TEXT},
        )
    fig.update_yaxes(title="repeated n-grams (%)", range=[0, top * 1.18 + 20], ticksuffix="%")
    fig.update_layout(barmode="group", bargap=0.25)
    return styled(fig, title or "How much of each text repeats itself", height=430)


def loop_label(row: dict) -> str:
    """'loop from token 91<br>(32-token cycle)', or 'no loop'; with seeds, how many runs looped."""
    loop = row["loop"]
    text = f"loop from<br>token {loop.start + 1}" if loop else "no loop"
    if row["runs"] > 1:
        text += f"<br>({row['looped_runs']}/{row['runs']} seeds looped)"
    return text


def _percent(x: float) -> str:
    return f"{100 * x:.0f}%"


def texts_html(rows: list[dict]) -> str:
    """One card per setting: its numbers, then its text with repeated spans shaded and the loop start marked."""
    if not rows:
        return '<div class="repetition-empty">The texts appear here after a run.</div>'
    cards = []
    for r in rows:
        loop = r["loop"]
        numbers = [
            f"3-grams repeated <b>{_percent(r['rep3'])}</b>",
            f"4-grams repeated <b>{_percent(r['rep4'])}</b>",
            f"loop from token <b>{loop.start + 1}</b> ({loop.period}-token cycle)" if loop else "no loop",
            f"tokens that reuse an earlier token {_percent(r['reuse'])}",
            *(f"“{html.escape(w)}” ×{c}" for w, c in r["words"].items()),
        ]
        seeds = f" · first of {r['runs']} seeds shown" if r["runs"] > 1 else ""
        stop = "then end-of-sequence" if r["stop_reason"] == "eos" else "stopped at the limit"
        label = html.escape(r["label"])
        head = f'<div class="repetition-head"><b>{label}</b> · {len(r["tokens"])} tokens, {stop}{seeds}</div>'
        body = _marked_text(r["tokens"], r["mask"], loop.start if loop else None)
        cards.append(
            f'<div class="repetition-card">{head}<div class="repetition-nums">{" · ".join(numbers)}</div>{body}</div>'
        )
    legend = (
        f'<div class="repetition-legend"><mark class="rep" style="background:{REPEAT}">shaded, underlined</mark> = '
        'part of a 4-gram that had already appeared · <span class="repetition-loop">⟳ loop</span> = where the text '
        "starts repeating itself back to back</div>"
    )
    return f'<div class="repetition-cards">{legend}{"".join(cards)}</div>'


def _marked_text(tokens: list[str], mask: list[bool], loop_start: int | None) -> str:
    parts, open_mark = [], False
    for i, (token, repeated) in enumerate(zip(tokens, mask)):
        if repeated != open_mark:
            parts.append(f'<mark class="rep" style="background:{REPEAT}">' if repeated else "</mark>")
            open_mark = repeated
        if i == loop_start:
            parts.append('<span class="repetition-loop">⟳ loop</span>')
        parts.append(html.escape(token))
    if open_mark:
        parts.append("</mark>")
    return f'<div class="repetition-text">{"".join(parts)}</div>'


def findings_markdown(rows: list[dict], words: tuple[str, ...] = ()) -> str:
    """Plain sentences computed from the run, then the two claims of the references checked against it."""
    if not rows:
        return ""
    by_key = {r["key"]: r for r in rows}
    lines = ["; ".join(_sentence(r) for r in rows) + "."]
    greedy = by_key.get("greedy")
    sampled = [r for r in rows if r["sampled"]]
    if greedy and sampled:
        worst = max(sampled, key=lambda r: r["rep4"])
        if greedy["rep4"] == worst["rep4"]:
            verdict = "no difference within this many tokens; try more tokens."
        elif greedy["rep4"] < worst["rep4"]:
            verdict = "the claim does **not** hold on this run."
        elif greedy["loop"]:
            verdict = "the claim holds here."
        else:
            verdict = "greedy repeated more, but it did not fall into a loop on this prompt within this many tokens."
        lines.append(
            f"**Greedy loops far more?** Greedy repeated {_percent(greedy['rep4'])} of its 4-grams; the most "
            f"repetitive sampled setting ({worst['label']}) {_percent(worst['rep4'])}: {verdict}"
        )
    big = by_key.get("repetition_big")
    if big and greedy:
        counts = [f"“{w}” ×{big['words'][w]} (greedy ×{greedy['words'][w]})" for w in words]
        lines.append(
            f"**A large repetition penalty damages necessary repetition?** With {big['label']}, "
            f"{_percent(big['reuse'])} of the tokens reuse a token seen before (greedy: {_percent(greedy['reuse'])})"
            + (": " + ", ".join(counts) if counts else "")
            + ". Names, list markers and code identifiers have to repeat; read its text below."
        )
    return "\n\n".join(lines)


def _sentence(r: dict) -> str:
    loop = r["loop"]
    text = f"**{r['label']}** repeated {_percent(r['rep4'])} of its 4-grams"
    if r["runs"] > 1:
        text += f" (mean of {r['runs']} seeds)"
    return text + (f" and looped from token {loop.start + 1}" if loop else ", no loop")


CSS = """
.repetition-cards { display:flex; flex-direction:column; gap:10px; }
.repetition-card { border:1px solid rgba(128,128,128,.45); border-radius:8px; padding:8px 12px; }
.repetition-head { font-size: calc(17px * var(--lab-type, 1)); }
.repetition-nums { font-size: calc(15px * var(--lab-type, 1)); opacity:.85; margin:2px 0 6px; }
.repetition-text { white-space:pre-wrap; font-size: calc(16px * var(--lab-type, 1)); line-height:1.6;
  max-height:260px; overflow-y:auto; }
mark.rep { color:inherit; text-decoration:underline dotted; text-underline-offset:3px; padding:0; }
.repetition-loop { font-size: calc(13px * var(--lab-type, 1)); font-weight:bold; border:1px solid currentColor;
  border-radius:4px; padding:0 3px;
            margin:0 3px; white-space:nowrap; }
.repetition-legend { font-size: calc(14px * var(--lab-type, 1)); opacity:.85; }
"""
