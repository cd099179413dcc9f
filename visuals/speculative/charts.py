"""Speculative decoding, drawn: one round (where the guesses came from, how each was judged) and a whole run
(accepted per round, acceptance by draft position, where the time went, the speed-up over plain decoding).

Colours keep their app-wide meaning: blue = kept (an accepted guess), orange = chosen (the bonus token the target
adds), vermillion = removed (a rejected guess), grey = never looked at; reddish purple, the colour of a token that
did not come from the model's own choice, marks the draft; yellow marks the n-gram prompt lookup matched.
Takes `decoding.speculative.records`; no torch, no gradio.
"""

import html

import plotly.graph_objects as go

from visuals.speculative.round import DRAFT, REJECTED
from visuals.theme import CHOSEN, DECODE, KEPT, OTHER, PREFILL, SAMPLING, empty_figure, styled
from visuals.tokens import visible_token


def verify_figure(rnd, greedy: bool) -> go.Figure:
    """Per verified position: p(guess) from the target beside q(guess) from the draft; below, the chance of keeping
    it, min(1, p/q), with the uniform drawn against it (greedy: whether it is the target's argmax)."""
    checks = [c for c in rnd.checks if c.draft_id is not None]
    if not checks:
        return empty_figure("No guesses this round: the verify pass was one plain decode step", 330)
    x = [f"{c.index + 1}: {visible_token(c.draft_text)}" for c in checks]
    # greedy: a full bar per checked guess, coloured by its verdict (an empty bar for a rejection would not show)
    keep = [(1.0 if c.accepted is not None else 0.3) if greedy else min(1.0, c.p / c.q) for c in checks]
    verdict = [{True: "kept", False: "rejected", None: "not checked"}[c.accepted] for c in checks]
    colours = [{True: KEPT, False: REJECTED, None: OTHER}[c.accepted] for c in checks]
    fig = go.Figure()
    fig.add_bar(x=x, y=[c.p for c in checks], name="p: target", marker_color=KEPT, yaxis="y")
    fig.add_bar(x=x, y=[c.q for c in checks], name="q: draft", marker_color=DRAFT, yaxis="y")
    fig.add_bar(
        x=x,
        y=keep,
        name="chance to keep" if not greedy else "verdict",
        marker_color=colours,
        yaxis="y2",
        text=verdict,
        textposition="inside",
        textfont={"size": 12},
        textangle=-90,  # upright along the bar: across it, "not checked" on a short bar ran into its neighbours'
        insidetextanchor="start",
        showlegend=False,
        opacity=0.85,
        hovertext=[f"target's argmax here: {visible_token(c.target_text)}" for c in checks],
        hoverinfo="text+y",
    )
    if not greedy:
        u = [(xi, c.uniform) for xi, c in zip(x, checks) if c.uniform is not None]
        fig.add_scatter(
            x=[a for a, _ in u],
            y=[b for _, b in u],
            mode="markers",
            name="uniform u (keep if below)",
            marker={"symbol": "diamond", "size": 14, "color": CHOSEN, "line": {"width": 1, "color": "#000"}},
            yaxis="y2",
        )
    styled(fig, None, height=360)
    fig.update_layout(
        barmode="group",
        # the guesses are named once, under the verdicts: named between the two panels, a long token's slanted
        # label ran into the verdicts' bars
        xaxis={"anchor": "y2", "automargin": True},
        yaxis={"domain": [0.5, 1.0], "range": [0, 1.05], "title": "probability", "anchor": "x"},
        yaxis2={
            "domain": [0.0, 0.4],
            "range": [0, 1.05],
            "title": "argmax?" if greedy else "keep?",
            "anchor": "x",
            "showticklabels": not greedy,
        },
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        margin={"t": 60},
        uniformtext={"minsize": 12, "mode": "show"},  # "not checked" on a short bar stays readable
    )
    return fig


def decisive_figure(rnd) -> go.Figure:
    """The position that decided the round: the first rejection (with its residual max(0, p - q), renormalised), or
    the bonus position when every guess was kept. The target's distribution beside the draft's."""
    check = next((c for c in rnd.checks if c.accepted is False), rnd.checks[-1])
    labels = [visible_token(t) for _, t, _, _ in check.top]
    fig = go.Figure()
    fig.add_bar(y=labels, x=[p for *_, p, _ in check.top], name="p: target", marker_color=KEPT, orientation="h")
    if check.draft_id is not None:
        fig.add_bar(y=labels, x=[q for *_, q in check.top], name="q: draft", marker_color=DRAFT, orientation="h")
    if rnd.residual:
        res = {t: r for t, _, r in rnd.residual}
        fig.add_bar(
            y=labels,
            x=[res.get(t, 0.0) for t, *_ in check.top],
            name="residual max(0, p − q), renormalised",
            marker_color=SAMPLING,
            orientation="h",
        )
    where = "rejected here" if check.accepted is False else "bonus position"
    styled(
        fig, f"Position {check.index + 1} ({where}) → {html.escape(visible_token(rnd.bonus_text), quote=False)}", 400
    )
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": -0.18, "x": 0})
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(title="probability after the samplers")  # fits a chart 340 px wide
    return fig


def run_figure(rounds, k: int, by_position: list[tuple[int, int]]) -> go.Figure:
    """Left: tokens each round added (kept guesses + the bonus) against the guesses drafted. Right: how often each
    draft position was kept, of the times it was checked (a guess after a rejection is never checked)."""
    if not rounds:
        return empty_figure("Run a round: each round's accepted guesses appear here", 330)
    xs = [r.index + 1 for r in rounds]
    fig = go.Figure()
    fig.add_bar(x=xs, y=[r.accepted for r in rounds], name="guesses kept", marker_color=KEPT)
    fig.add_bar(x=xs, y=[r.kept - r.accepted for r in rounds], name="target's own token", marker_color=CHOSEN)
    fig.add_scatter(
        x=xs,
        y=[len(r.drafted) for r in rounds],
        mode="markers",
        name="guesses drafted",
        marker={"symbol": "line-ew", "size": 18, "line": {"width": 3, "color": DRAFT}},
    )
    rates = [a / n if n else 0.0 for a, n in by_position]
    fig.add_bar(
        x=[str(i + 1) for i in range(k)],
        y=rates,
        name="kept / checked",
        marker_color=KEPT,
        opacity=0.7,
        xaxis="x2",
        yaxis="y2",
        showlegend=False,
        text=[f"{a}/{n}" for a, n in by_position],
        textposition="outside",
    )
    styled(fig, None, height=360)
    fig.update_layout(
        barmode="stack",
        xaxis={"domain": [0, 0.58], "title": "round", "dtick": 1 if len(rounds) <= 30 else None},
        yaxis={"title": "tokens", "rangemode": "tozero"},
        # the right panel's axis is named under it: a y title there would sit on the left panel's last bar
        xaxis2={"domain": [0.68, 1.0], "title": "kept, by draft position", "anchor": "y2", "type": "category"},
        yaxis2={"anchor": "x2", "range": [0, 1.15], "tickformat": ".0%"},
        legend={"orientation": "h", "y": 1.12, "x": 0},
        margin={"t": 60},
    )
    return fig


def timeline_figure(rounds, prefill_ms: float, plain_prefill_ms: float, plain_token_ms: list[float]) -> go.Figure:
    """Where the time went, side by side: speculative (prefill, then each round's draft, verify and accept) and
    plain decoding (prefill, then one pass per token). One bar per segment, placed at its start."""
    if not rounds or not plain_token_ms:
        return empty_figure("Run to end: both ways of decoding are timed here, side by side", 280)
    segs = {"prefill": ([], []), "draft": ([], []), "verify pass": ([], []), "accept": ([], []), "plain": ([], [])}

    def lay(name: str, row: str, start: float, ms: float) -> float:
        segs[name][0].append((row, start, ms))
        return start + ms

    t = lay("prefill", "speculative", 0.0, prefill_ms)
    for r in rounds:
        t = lay("draft", "speculative", t, r.draft_ms)
        t = lay("verify pass", "speculative", t, r.verify_ms)
        t = lay("accept", "speculative", t, r.accept_ms)
    t = lay("prefill", "plain", 0.0, plain_prefill_ms)
    for ms in plain_token_ms:
        t = lay("plain", "plain", t, ms)
    colours = {"prefill": PREFILL, "draft": DRAFT, "verify pass": DECODE, "accept": SAMPLING, "plain": OTHER}
    names = {"plain": "plain decode pass (one token)"}
    fig = go.Figure()
    for name, (items, _) in segs.items():
        fig.add_bar(
            y=[row for row, _, _ in items],
            x=[ms for *_, ms in items],
            base=[s for _, s, _ in items],
            orientation="h",
            name=names.get(name, name),
            marker={"color": colours[name], "line": {"width": 0.5, "color": "#fff"}},
            hovertemplate="%{x:.1f} ms<extra>" + name + "</extra>",
        )
    styled(fig, None, height=280)
    fig.update_layout(barmode="overlay", legend={"orientation": "h", "y": -0.35, "x": 0}, bargap=0.35)
    fig.update_xaxes(title="milliseconds since the start (waiting for the model's turn not counted)")
    fig.update_yaxes(categoryorder="array", categoryarray=["plain", "speculative"])
    return fig
