"""Beam search as a tree, and greedy beside beam search.

The tree: x is the step, every node a token with its cumulative log-probability, every edge parent → child.
Bold blue paths lead to a beam that is still live; green diamonds (◆) are finished hypotheses with their
length-penalised score; the orange path is the answer once the search has stopped; faded grey nodes are
candidates that were scored and pruned; thin pale paths are beams that survived a while and then died out.
Takes the plain records of `decoding.beams.records` (BeamStep) and `decoding.beams.scoring` (Scored);
no torch, no gradio.
"""

import html
import math

import plotly.graph_objects as go

from visuals.beams.tree import Node, tree_nodes
from visuals.theme import CHOSEN, GRID, KEPT, OTHER, REMOVED_OPACITY, SERIES, TEXT, ink, styled
from visuals.tokens import visible_text, visible_token

FINISHED = SERIES[2]  # bluish green: a hypothesis in the finished set
ROW_PX = 36  # one node's height: readable on a projector
SHOWN_STEPS = 8  # steps on screen at once (a label needs ~110 px); a longer search scrolls with a range slider
LABEL_CHARS = 9


STYLES = {  # status: (legend name, colour, line width, node size, opacity, marker symbol)
    "best": ("the answer", CHOSEN, 4.5, 13, 1.0, "circle"),
    "live": ("live beam", KEPT, 3.5, 11, 1.0, "circle"),
    "finished": ("finished (score)", FINISHED, 2.5, 15, 1.0, "diamond"),
    "dropped": ("finished, beaten later", FINISHED, 1.0, 11, 0.5, "diamond-open"),
    "dead": ("died out", KEPT, 1.2, 8, 0.4, "circle"),
    "pruned": ("pruned", OTHER, 0.8, 6, REMOVED_OPACITY, "circle"),
}
DRAW_ORDER = ("pruned", "dead", "dropped", "live", "finished", "best")


def beam_tree_figure(steps, length_penalty: float = 1.0, done: bool = False, title: str | None = None) -> go.Figure:
    """The search so far as a tree (steps: BeamStep records, oldest first)."""
    nodes = tree_nodes(steps, length_penalty, done)
    fig = go.Figure()
    for status in DRAW_ORDER:
        _draw_status(fig, nodes, status)
    fig.add_scatter(
        x=[0],
        y=[0],
        mode="markers+text",
        text=["prompt"],
        textposition="middle left",
        showlegend=False,
        marker={"color": TEXT, "size": 12, "symbol": "square"},
        hoverinfo="skip",
    )
    cols = max((n.col for n in nodes), default=-1) + 2
    rows = max((sum(n.col == c for n in nodes) for c in range(cols)), default=1)
    scrolls = cols - 1 > SHOWN_STEPS
    styled(fig, title, height=max(360, 90 + ROW_PX * (rows + 1)) + 70 * scrolls)
    fig.update_layout(hovermode="closest", showlegend=True)
    fig.update_layout(legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    whole = [-1.1, cols - 0.4]
    fig.update_xaxes(
        range=shown_steps(nodes, cols) if scrolls else whole,
        tickvals=list(range(1, cols)),
        ticktext=[str(c) for c in range(1, cols)],
        title="step (tokens generated)",
        showgrid=True,
        gridcolor=GRID,
        zeroline=False,
        rangeslider={"visible": scrolls, "range": whole, "thickness": 0.12, "bordercolor": GRID, "borderwidth": 1},
    )
    fig.update_yaxes(visible=False, range=[-(rows + 1) / 2, (rows + 2) / 2])
    return fig


def _draw_status(fig: go.Figure, nodes: list[Node], status: str) -> None:
    """The edges into the nodes of one status, then the nodes with their labels."""
    name, colour, width, size, opacity, symbol = STYLES[status]
    mine = [n for n in nodes if n.status == status]
    if not mine:
        return
    xs, ys = [], []
    for n in mine:
        p = nodes[n.parent] if n.parent is not None else None
        xs += [p.col + 1 if p else 0, n.col + 1, None]
        ys += [p.y if p else 0.0, n.y, None]
    fig.add_scatter(
        x=xs,
        y=ys,
        mode="lines",
        line={"color": colour, "width": width},
        opacity=opacity,
        hoverinfo="skip",
        legendgroup=status,
        showlegend=False,
    )
    fig.add_scatter(
        x=[n.col + 1 for n in mine],
        y=[n.y for n in mine],
        mode="markers+text",
        name=name,
        marker={
            "color": colour,
            "size": [size + 4 * (n.fate == "finished") for n in mine],
            "line": {"width": 0},
            "symbol": [symbol if n.fate != "finished" or status == "dropped" else "diamond" for n in mine],
            "opacity": opacity,
        },
        # the markers fade with their status, the labels never do: a faded label would not read on a projector
        text=[_label(n) for n in mine],
        textposition="top center",
        legendgroup=status,
        textfont={"size": 13 if status == "pruned" else 14, "color": ink(colour) if status != "pruned" else TEXT},
        hovertext=[_hover(n) for n in mine],
        hoverinfo="text",
        legendrank=list(STYLES).index(status),
    )


def shown_steps(nodes: list[Node], cols: int) -> list[float]:
    """The x range a long tree opens on: SHOWN_STEPS steps ending at the finished hypotheses (the answer first), or at
    the newest step while none has finished; the range slider under the tree reaches the rest."""
    ends = [n.col + 1 for n in nodes if n.status == "best"] or [n.col + 1 for n in nodes if n.status == "finished"]
    right = min(cols - 0.4, max(ends, default=cols - 1) + 0.6)
    return [right - SHOWN_STEPS - 0.5, right]


def _label(n: Node) -> str:
    token = _esc(_short(visible_token(n.token)))
    if n.status == "pruned":
        return token
    if n.hyp_score is not None:
        return f"{token} ◆{n.hyp_score:.2f}"
    return f"{token} {n.score:.1f}"


def _esc(text: str) -> str:
    # plotly reads &lt; &gt; &amp; in text, but shows &quot; literally
    return html.escape(text, quote=False)


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _hover(n: Node) -> str:
    path = visible_text(_esc("".join(n.path)))
    lines = [
        f"<b>{_esc(visible_token(n.token))}</b> (step {n.col + 1})",
        f"log p(token) = {n.logprob:.3f}",
        f"cumulative log p = {n.score:.3f}",
        f"rank in the pool: {n.rank + 1}" if n.rank >= 0 else "outside the pool (shown for contrast)",
        f"{STYLES[n.status][0]}",
    ]
    if n.hyp_score is not None:
        lines.insert(3, f"score = {n.score:.3f} / {len(n.path)}^penalty = {n.hyp_score:.4f}")
    lines.append(f"…{path[-60:]}" if len(path) > 60 else path)
    return "<br>".join(lines)


def beams_markdown(steps, length_penalty: float = 1.0, done: bool = False) -> str:
    """The live beams and the finished set after the last step, as a markdown table each."""
    if not steps:
        return "*No beams yet: press **Step**.*"
    nodes = tree_nodes(steps, length_penalty, done)
    last = steps[-1].index
    live = sorted((n for n in nodes if n.col == last and n.fate == "running"), key=lambda n: -n.score)
    fin = [n for n in nodes if n.fate == "finished" and n.status in ("finished", "best")]
    fin.sort(key=lambda n: -n.hyp_score)
    out = ["**Live beams** (cumulative log-probability; the next step extends each by every token)", ""]
    out += ["| # | text so far | log p |", "|---|---|---|"]
    out += [f"| {i + 1} | {_cell(n.path)} | {n.score:.3f} |" for i, n in enumerate(live)] or ["| – | none | |"]
    out += ["", f"**Finished hypotheses** (score = log p ÷ length^{length_penalty:g}; best first)", ""]
    out += ["| # | text | tokens | log p | score |", "|---|---|---|---|---|"]
    out += [
        f"| {'★' if n.status == 'best' else i + 1} | {_cell(n.path)} | {len(n.path)} | {n.score:.3f} | "
        f"{n.hyp_score:.4f} |"
        for i, n in enumerate(fin)
    ] or ["| – | none yet | | | |"]
    return "\n".join(out)


def _cell(path: list[str], limit: int = 240) -> str:
    text = visible_text("".join(path)).replace("|", "\\|")
    text = text if len(text) <= limit else "…" + text[-(limit - 1) :]
    return _esc(text) or "∅"


def compare_figure(greedy, beam, beam_label: str = "beam search") -> go.Figure:
    """Cumulative log-probability, token by token, of the greedy sequence and the beam-search sequence."""
    fig = go.Figure()
    for seq, name, colour, dash in ((greedy, "greedy", SERIES[0], "dot"), (beam, beam_label, CHOSEN, "solid")):
        total, ys = 0.0, []
        for lp in seq.logprobs:
            total += lp
            ys.append(total)
        fig.add_scatter(
            x=list(range(1, len(ys) + 1)),
            y=ys,
            mode="lines+markers",
            name=f"{name}: {total:.2f}",
            line={"color": colour, "width": 3, "dash": dash},
            marker={"size": 7},
            customdata=[[_esc(visible_token(t)), lp] for t, lp in zip(seq.token_texts, seq.logprobs)],
            hovertemplate=f"{name} · token %{{x}}: <b>%{{customdata[0]}}</b><br>log p = %{{customdata[1]:.3f}}"
            "<br>cumulative = %{y:.3f}<extra></extra>",
        )
    styled(fig, "Cumulative log-probability (higher = more probable)", height=340)
    fig.update_xaxes(title="tokens generated")
    fig.update_yaxes(title="sum of log p")
    return fig


def compare_markdown(greedy, beam, beam_label: str = "beam search", cut: tuple[bool, bool] = (False, False)) -> str:
    """Both texts with their totals, and which one the model finds more probable. `cut`: (greedy, beam) stopped at
    the token limit rather than at the end token, so their totals are of unfinished texts."""
    g, b = greedy.logprob, beam.logprob
    note = [" ✂" if c else "" for c in cut]
    rows = [
        "| | text | tokens | log p | per token |",
        "|---|---|---|---|---|",
        f"| greedy | {_cell([greedy.text])}{note[0]} | {len(greedy.token_ids)} | {g:.3f} | {_mean(greedy):.3f} |",
        f"| {beam_label} | {_cell([beam.text])}{note[1]} | {len(beam.token_ids)} | {b:.3f} | {_mean(beam):.3f} |",
    ]
    if greedy.token_ids == beam.token_ids:
        verdict = "Both found the **same sequence**: here the locally best token was also globally best."
    elif b > g:
        verdict = (
            f"**{beam_label.capitalize()} found a more probable sequence**: {b - g:.2f} nats higher, "
            f"{_ratio(b - g)} as likely. Greedy took the most probable token at every step, and still lost."
        )
    else:
        verdict = (
            f"**Greedy's sequence is more probable** by {g - b:.2f} nats ({_ratio(g - b)}): beam search ranks "
            "finished hypotheses by the length-penalised score, not by total log p, and keeps only num_beams "
            "candidates, so it can miss the most probable sequence."
        )
    if any(cut):
        verdict += " ✂ = cut at max new tokens: its total is of an unfinished text."
    return "\n".join(rows) + "\n\n" + verdict


def _mean(seq) -> float:
    return seq.logprob / max(1, len(seq.logprobs))


def _ratio(nats: float) -> str:
    return f"{math.exp(nats):,.1f}×" if nats < 7 else f"{math.exp(nats):.1e}×"
