"""Constrained decoding drawn from plain data: the answer with its forced tokens, the mask rows of one step (the
grammar one row among the filters), each engine's order on that step, and the N-samples comparison.

A Step's answer is one element the page patches (`step_view`): its words, the answer's chips (a Step appends its
own), the step's chart and its mask rows, as HTML; the engines' table is an element of its own, which a moved knob
redraws alone. The N-samples measurement, drawn once per press, stays a plotly chart and Markdown."""

import html
import statistics

import plotly.graph_objects as go

from decoding.stages import FILTER, GRAMMAR, MIN_P, STAGES, TEMPERATURE, TOP_K, TOP_P
from decoding.trace import Step
from visuals.distribution import distribution_figure
from visuals.glossary import term
from visuals.parts import Parts
from visuals.theme import CHOSEN, FORCED, KEPT, OTHER, REMOVED, STAGE_LABELS, figure_from, look
from visuals.tokens import visible_token
from visuals.words import count

GRAMMAR_COLOUR = REMOVED[GRAMMAR]
# the penalties and temperature reshape the logits and remove nothing
RESHAPING = tuple(name for name, stage in STAGES.items() if stage.kind != FILTER)


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:.2f})"


def answer_html(steps: list[Step], held: str = "") -> str:
    """The answer so far, one chip per token: sampled (shaded by the probability it was chosen with), forced by
    the grammar (wine, dashed: no sampling, no pass of its own), or forced by you; ↺ marks a llama.cpp resample."""
    return f'<div class="chips">{"".join(answer_chips(steps, held))}</div>{LEGEND}'


def answer_chips(steps: list[Step], held: str = "") -> tuple[str, ...]:
    """The answer's chips, one per token and the text held back, or what to press: what a Step appends to."""
    chips = []
    for s in steps:
        if s.grammar_forced:
            style = f"background:{_rgba(GRAMMAR_COLOUR, 0.25)};outline:2px dashed {GRAMMAR_COLOUR};"
            title = "forced by the grammar"
        elif s.forced:
            style, title = f"background:{_rgba(FORCED, 0.5)};outline:2px dashed {FORCED};", "forced by you"
        else:
            style = f"background:{_rgba(CHOSEN, 0.15 + 0.85 * max(0.0, min(1.0, s.prob_after)))};"
            title = f"sampled with p={s.prob_after:.3f} (model p={s.prob_before:.3f}); {s.allowed:,} tokens legal"
        mark = "↺" if s.resampled_from is not None else ""
        chips.append(
            f'<span class="tok" style="{style}" title="step {s.index + 1} · id {s.token_id} · {html.escape(title)}">'
            f"{html.escape(visible_token(s.token_text))}{mark}</span>"
        )
    if held:
        chips.append(f'<span class="tok held">{html.escape(held)}</span>')
    return tuple(chips) or ('<span class="tok-legend">no token yet: press Step</span>',)


_PAD = "padding:0 3px;margin:0 3px;"
LEGEND = (
    f'<div class="tok-legend">shaded = sampled · <span style="{_PAD}outline:2px dashed {GRAMMAR_COLOUR}">dashed wine'
    f"</span> = forced by the grammar (no sampling, no {term('forward pass')} of its own) · "
    f'<span style="{_PAD}outline:2px dashed {FORCED}">dashed pink</span> = forced by you · ↺ = llama.cpp drew an '
    "illegal token and resampled</div>"
)


def step_view(status: str, steps: list[Step], held: str, chart: str, rows: str) -> Parts:
    """What a Step shows, in order: its words, the answer's chips (a Step appends its tokens), the chart of the last
    sampled step and its mask rows (each replaced)."""
    chips = answer_chips(steps, held)
    whole = (
        f'<div class="constrained-view"><div id="constrained-status">{status}</div>'
        f'<div id="constrained-answer"><div class="chips">{"".join(chips)}</div>{LEGEND}</div>'
        f'<div id="constrained-chart">{chart}</div><div id="constrained-rows">{rows}</div></div>'
    )
    slots = {"#constrained-status": status, "#constrained-chart": chart, "#constrained-rows": rows}
    return Parts(html=whole, shape=("step",), strips={"#constrained-answer .chips": chips}, slots=slots)


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def _table(head: list[str], rows: list[list[str]], right: tuple[int, ...] = ()) -> str:
    """An HTML table of cells already HTML; the columns in `right` aligned right (numbers)."""

    def cell(tag: str, i: int, text: str) -> str:
        return f"<{tag}{' class=constrained-right' if i in right else ''}>{text}</{tag}>"

    top = "".join(cell("th", i, h) for i, h in enumerate(head))
    body = "".join(f"<tr>{''.join(cell('td', i, c) for i, c in enumerate(r))}</tr>" for r in rows)
    return f'<table class="constrained-table"><thead><tr>{top}</tr></thead><tbody>{body}</tbody></table>'


def step_chart(step: Step) -> str:
    """The tab's distribution chart of one sampled step (the grammar's bars in its own colour), as the Step tab
    draws it (HTML: it follows every step of every student on this tab)."""
    return distribution_figure(step, n=20)


def mask_rows_html(step: Step, vocab_size: int, tokenizer_decode=None) -> str:
    """One row per stage that ran, in order: tokens kept after it and the top candidates it removed; the grammar's
    row adds how much probability the model had put on illegal tokens."""
    if step.grammar_forced:
        return (
            f"<p><b>Step {step.index + 1}: {html.escape(visible_token(step.token_text))} forced by the grammar.</b> "
            "Only one continuation is legal here, so nothing is sampled and the model is not asked: this token rides "
            "in the next forward pass with the ones around it (fast-forward).</p>"
        )
    rows = []
    before = vocab_size
    for name, kept in step.stages:
        label = html.escape(STAGE_LABELS.get(name, name))
        if name in RESHAPING:
            rows.append([label, f"{kept:,}", "reshapes the logits, removes nothing"])
            continue
        removed = [c for c in step.top if c.removed_by == name]
        shown = ", ".join(f"{_code(visible_token(c.text))} {c.prob_before:.1%}" for c in removed[:5])
        more = f" and {len(removed) - 5} more" if len(removed) > 5 else ""
        if name == GRAMMAR:
            label = f"<b>grammar</b>: {kept:,} of {before:,} legal" if kept <= before else "<b>grammar</b>"
            shown = (shown or "none of them") + f"{more}; <b>{term('illegal mass')} {step.illegal_mass:.1%}</b>"
            more = ""
        rows.append([label, f"{kept:,}", f"{shown or '—'}{more}"])
        before = kept
    table = _table(["stage", "tokens left", "removed among the model's top 20 (model probability)"], rows, (1,))
    picked = f"<b>Chosen:</b> {_code(visible_token(step.token_text))}, model probability {step.prob_before:.1%}"
    if step.resampled_from is not None and tokenizer_decode is not None:
        drawn = visible_token(tokenizer_decode(step.resampled_from))
        picked += f"; llama.cpp's chain first drew {_code(drawn)}, illegal, so it redid the step with the grammar first"
    return f"{table}<p>{picked}</p>"


def forced_after(steps: list[Step]) -> str:
    """The tokens the grammar forced after the step shown, if any."""
    forced = [s for s in steps if s.grammar_forced]
    if not forced:
        return ""
    text = "".join(visible_token(s.token_text) for s in forced)
    return f"<p>Then <b>{count(len(forced), 'token')} forced by the grammar</b>: {_code(text)}.</p>"


def token_origins(steps: list[Step]) -> str:
    """Where the tokens came from, each counted once: "2 sampled, 5 forced by the grammar, 1 typed by you"."""
    grammar = sum(s.grammar_forced for s in steps)
    yours = sum(s.forced and not s.grammar_forced for s in steps)
    said = [f"{len(steps) - grammar - yours} sampled", f"{grammar} forced by the grammar"]
    return ", ".join(said + ([f"{yours} typed by you (Force)"] if yours else []))


def orders_html(outcomes: list, settings_note: str, position: int | None = None) -> str:
    """Each engine's order on the next token's logits (answer token `position`): where the grammar runs, and what
    happens if it runs last. The chart above shows the last sampled token; this table looks one token ahead."""
    ahead = f"for the next token, position {position} of the answer" if position else "for the next token"
    rows = []
    for o in outcomes:
        order = " → ".join(_stage(s, s in o.enabled) for s in o.order if s in SHOWN_STAGES)
        legal = "<b>0: nothing legal</b>" if o.legal_left == 0 else f"{o.legal_left:,}"
        rows.append([html.escape(o.engine), order, f"{o.truncated:,}", legal, html.escape(o.recovery)])
    head = ["engine", "stage order (the grammar in bold)", "samplers alone keep", "legal among them", "recovery"]
    return (
        f"<p><b>Where each engine puts the grammar, {ahead}</b> ({html.escape(settings_note)}):</p>"
        f"{_table(head, rows, (2, 3))}"
    )


SHOWN_STAGES = (GRAMMAR, TEMPERATURE.name, TOP_K.name, TOP_P.name, MIN_P.name)  # the tab's knobs


def _stage(name: str, on: bool) -> str:
    label = html.escape(STAGE_LABELS.get(name, name))
    return f"<b>{label}</b>" if name == GRAMMAR else label if on else f"{label} (off)"


def comparison_figure(cmp) -> go.Figure:
    """Each sample's log-probability under the model, without and with the constraint: ● validates, ✕ does not."""
    data = []
    for row, samples in (("without", cmp.unconstrained), ("with the constraint", cmp.constrained)):
        for valid in (True, False):
            picked = [s for s in samples if s.valid == valid]
            if not picked:
                continue
            data.append(
                dict(
                    type="scatter",
                    mode="markers",
                    x=[s.logprob for s in picked],
                    y=[row] * len(picked),
                    name=f"{row}: {'valid' if valid else 'invalid'}",
                    marker={
                        "symbol": "circle" if valid else "x",
                        "size": 13,
                        "color": (GRAMMAR_COLOUR if row != "without" else KEPT) if valid else OTHER,
                        "line": {"width": 1, "color": "white"},
                    },
                    customdata=[[s.seed, s.text[:80], s.problem or "valid", s.tokens] for s in picked],
                    hovertemplate="seed %{customdata[0]} · %{customdata[3]} tokens<br>%{customdata[1]}"
                    "<br>%{customdata[2]}<br>log p %{x:.2f}<extra></extra>",
                )
            )
    layout = look("The answer's log-probability under the model (each dot one seeded sample)", height=300)
    layout["xaxis"] |= {"title": {"text": "log p of the whole answer (higher = the model liked it more)"}}
    layout["yaxis"] |= {
        "type": "category",
        "categoryorder": "array",
        "categoryarray": ["with the constraint", "without"],
    }
    layout["legend"] = {"orientation": "h", "y": -0.35}
    layout["margin"] = {"l": 150, "r": 20, "t": 50, "b": 90}
    return figure_from(data, layout)


def comparison_markdown(cmp) -> str:
    """The numbers: how many validate, the log-probabilities, the mask beside the forward pass, forced tokens."""
    n = len(cmp.constrained)

    def median(samples, per_token=False):
        values = [s.logprob / max(1, s.tokens) if per_token else s.logprob for s in samples]
        return statistics.median(values) if values else float("nan")

    free, held = cmp.unconstrained, cmp.constrained
    share = cmp.mask_ms_p50 / cmp.forward_ms_p50 if cmp.forward_ms_p50 else float("nan")
    best = max(free, key=lambda s: s.logprob) if free else None
    if best is None:
        verdict = ""
    elif best.valid:
        verdict = f"The most likely free answer (seed {best.seed}) is legal: the model already wanted a legal answer."
    else:
        verdict = (
            f"The most likely free answer (seed {best.seed}, log p {best.logprob:.2f}) is `{best.text[:60]!r}`: "
            f"illegal ({best.problem}). **The model's most likely text was illegal here**; the constraint picks "
            "the most likely *legal* text it can reach one token at a time."
        )
    return "\n".join(
        [
            "| | without | with the constraint |",
            "|---|---:|---:|",
            f"| parse and validate | **{_valid(free)} of {len(free)}** | **{_valid(held)} of {n}** |",
            f"| median log p of the answer | {median(free):.2f} | {median(held):.2f} |",
            f"| median log p per token | {median(free, True):.2f} | {median(held, True):.2f} |",
            f"| median tokens | {statistics.median(s.tokens for s in free):.0f} "
            f"| {statistics.median(s.tokens for s in held):.0f} |",
            "",
            verdict,
            "",
            f"**Cost of the mask:** {cmp.mask_ms_p50:.2f} ms per step (median) beside a forward pass of "
            f"{cmp.forward_ms_p50:.1f} ms: **{share:.1%}** of it. **Forced tokens:** {cmp.forced_share:.0%} of the "
            f"constrained tokens were forced by the grammar; fast-forward fed them without a pass of their own, "
            f"saving {count(cmp.calls_saved, 'forward pass', 'forward passes')} over {count(n, 'run')}.",
        ]
    )


def _valid(samples) -> int:
    return sum(s.valid for s in samples)


# the tables' numbers to the right, and the view's parts apart (the page's style sheet, through the tab's spec)
CSS = """
.constrained-table td.constrained-right, .constrained-table th.constrained-right { text-align: right; }
/* a table wider than a phone scrolls sideways inside its box, never past the page's edge */
.constrained-table { display: block; overflow-x: auto; max-width: 100%; }
.constrained-view > div { margin: 6px 0; }
"""


def cancelled_note(cmp, n: int) -> str:
    """What a cancelled measurement finished: the samples without the constraint come first, then those with it."""
    free, held = len(cmp.unconstrained), len(cmp.constrained)
    if not held:
        return f"Cancelled after {free} of {n} samples without the constraint: none with it yet, so nothing to compare"
    return f"Cancelled after {n} of {n} samples without the constraint and {held} of {n} with it: those are shown"
