"""What each layer would have said: the logit lens as a table (a row per layer, its top tokens coloured by their
probability) and, over a run, how often each layer's top-1 is the token the step chose.

Reads `decoding.lens.LayerLens` (plain lists), without importing it: visuals never import torch.
"""

import html

from visuals.chart import Axis, Bar, Chart, Column, Rule, empty_html, figure_html
from visuals.glossary import model_label, term
from visuals.theme import CHOSEN, FONT_SIZE, KEPT, TEXT
from visuals.tokens import visible_token
from visuals.words import count

BIAS_NOTE = (
    "The plain logit lens reads every layer through a head trained only for the last one, so its early rows are "
    "biased (they often just echo the input token); the tuned lens learns a small map per layer for that reason "
    "(logit lens: nostalgebraist 2020, <a href='https://www.lesswrong.com/posts/AcKRB8wDpdaN6v6ru' target='_blank'>"
    "interpreting GPT: the logit lens</a>; tuned lens: Belrose et al. 2023, <a href='https://arxiv.org/abs/2303.08112' "
    "target='_blank'>Eliciting Latent Predictions from Transformers with the Tuned Lens</a>)."
)
FIRST, HALF = "first = final", "half p"  # the marks, beside the row they name
_RGB = ", ".join(str(int(KEPT[i : i + 2], 16)) for i in (1, 3, 5))
# gradio's own table styles are more specific than a class: the table's rules go by its id, and !important
CSS = "".join(
    [
        # a projector's text size; the box scrolls sideways (never cuts a column) where the panel is narrower
        ".lens-box { overflow-x: auto; max-width: 100%; }",
        f"#lens-table {{ border-collapse: collapse; font-size: {FONT_SIZE}px; width: auto !important;"
        " margin: 4px 0; }",
        "#lens-table td, #lens-table th { padding: 0 5px !important; line-height: 1.25 !important;"
        " border: 0 !important; border-bottom: 1px solid rgba(128,128,128,.2) !important; white-space: nowrap;"
        " background: none; text-align: left; }",
        "#lens-table td.tok { font-family: ui-monospace, monospace; color: #222; }",
        f"#lens-table td.final {{ outline: 2px solid {CHOSEN}; outline-offset: -2px; }}",
        f"#lens-table tr.last td, #lens-table tr.last th {{ border-top: 2px solid {TEXT} !important; }}",
        f"#lens-table .lens-mark {{ color: {TEXT}; font-weight: 600; font-size: {FONT_SIZE - 1}px; }}",
        # the marks sit under their row's name: a column of their own widened every row past a projector's panel
    ]
    # the cell's background holds as much blue as the probability, in tenths: 0 white, 1 the kept colour at 50%
    + [f"#lens-table td.lens-b{k} {{ background: rgba({_RGB}, {k / 20:.2f}) !important; }}" for k in range(11)]
)


def row_name(row: int, rows: int) -> str:
    return "embeddings" if row == 0 else f"layer {row}" + (" (final)" if row == rows - 1 else "")


def shown_token(token_id: int, text: str) -> str:
    """A token as a student reads it (spaces and line breaks made visible); one that shows nothing, by its id."""
    seen = visible_token(text)
    return seen if seen.strip() else f"id {token_id}"


def _cell(token_id: int, text: str, p: float, final: bool, outlined: str = "the final layer's top-1") -> str:
    """A token's cell; `final` outlines it, and its tooltip says what the outline means (`outlined`)."""
    tok = shown_token(token_id, text)
    title = f"{tok}: {p:.2%}" + (f" ({outlined})" if final else "")
    cls = f"tok lens-b{round(p * 10)}" + (" final" if final else "")
    tok = html.escape(tok)
    data = f"data-p='{p!r}' data-id='{token_id}'"
    return f"<td class='{cls}' title='{html.escape(title)}' {data}>{tok} <small>{p:.0%}</small></td>"


def _marks(lens, row: int) -> str:
    marks = [m for m, r in ((FIRST, lens.first_agreeing()), (HALF, lens.first_half())) if r == row]
    return f"<br><span class='lens-mark'>{' · '.join(marks)} ▸</span>" if marks else ""


def lens_table_html(lens) -> str:
    """One row per layer (embeddings first, the final layer last), its top tokens and their probabilities; the final
    choice outlined wherever a layer has it in its top; the two marks beside their rows."""
    rows = len(lens.top_ids)
    head = "".join(f"<th>#{i + 1}</th>" for i in range(len(lens.top_ids[0])))
    body = []
    for r in range(rows):
        cells = "".join(
            _cell(i, t, p, i == lens.final_id) for i, t, p in zip(lens.top_ids[r], lens.top_texts[r], lens.top_probs[r])
        )
        cls = " class='last'" if r == rows - 1 else ""
        final_p = f"{lens.final_prob[r]:.0%}"
        body.append(
            f"<tr{cls} data-row='{r}'><th>{row_name(r, rows)}{_marks(lens, r)}</th>{cells}<td>{final_p}</td></tr>"
        )
    final_text = html.escape(shown_token(lens.final_id, lens.top_texts[-1][0]))
    return (
        f"<style>{CSS}</style><div class='lens-box'><table class='lens-table' id='lens-table'><thead><tr>"
        f"<th>read after</th>{head}<th>p of<br>{final_text}</th></tr></thead><tbody>{''.join(body)}</tbody>"
        "</table></div>"
    )


def cost_line(lens) -> str:
    """What the panel cost, measured, on what."""
    return (
        f"Computed by one extra pass over this position (every layer's hidden state, then the {term('final norm')} "
        f"and the {term('LM head')} over all {len(lens.top_ids)} rows in one {term('matmul')}): "
        f"<span id='lens-ms'>{lens.ms:.0f}</span> ms on this server's {lens.device} ({model_label(lens.model)}, "
        f"{lens.dtype}). The final row is the model's own distribution, the chart's 'model probability'; the step "
        "then chooses from exactly it."
    )


def summary_line(lens, taken=None) -> str:
    """The two marks in words, after the token the step took (`taken`: a decoding.trace.Step, or None before the
    step chooses): the marks follow the final layer's top-1, which a sampled or forced step may not have taken."""
    rows = len(lens.top_ids)
    first, half = lens.first_agreeing(), lens.first_half()
    top1 = f"<b>{html.escape(shown_token(lens.final_id, lens.top_texts[-1][0]))}</b>"
    where = row_name(first, rows) if first is not None else "no row"
    marks = (
        f"is first the top-1 at <b>{where}</b> (marked <i>{term(FIRST)}</i>); its probability first reaches half of "
        f"its final {lens.final_prob[-1]:.0%} at <b>{row_name(half, rows)}</b> (marked <i>{term(HALF)}</i>)."
    )
    if taken is None:
        return f"The final layer's {term('top-1')} {top1} {marks}"
    took = f"<b>{html.escape(shown_token(taken.token_id, taken.token_text))}</b>"
    if taken.token_id == lens.final_id:
        return f"The step took {took}, the final layer's {term('top-1')}: it {marks}"
    how = "forced" if taken.forced else "sampled"
    seen = next((r for r, ids in enumerate(lens.top_ids) if taken.token_id in ids), None)
    shown = (
        f"in the top {len(lens.top_ids[0])} first at <b>{row_name(seen, rows)}</b>"
        if seen is not None
        else (f"in no row's top {len(lens.top_ids[0])}")
    )
    return (
        f"The step took {took} ({how}, rank {taken.rank} in the final row; {shown}), not the final layer's "
        f"{term('top-1')} "
        f"{top1}, which {marks}"
    )


AGREES = "lens top-1 = chosen token"
AGREEMENT_BLANK = "Step with this panel open: each step's lens adds to this curve"


def agreement_figure(shares: list[float], steps: int, exit_layer: int | None = None, whole_run: bool = False) -> str:
    """Per layer 0..L: the share of steps whose lens top-1 there is the token the step chose (`whole_run`: every
    step of a finished run, read in one pass), as an HTML chart (visuals.chart): it follows every step while the
    panel is open. The final layer's own share is said beside the title."""
    if not shares:
        return empty_html(AGREEMENT_BLANK, 160)
    every = 5 if len(shares) > 12 else 1
    columns = tuple(
        Column(str(layer), (Bar(AGREES, share, KEPT, hover=f"layer {layer}: {share:.0%} of the steps"),))
        for layer, share in enumerate(shares)
    )
    over = f"the whole run ({count(steps, 'step')})" if whole_run else count(steps, "step")
    final = f"final layer: {shares[-1]:.0%}"
    rules = (Rule(f"L = {exit_layer}", CHOSEN, x=exit_layer + 0.5),) if exit_layer is not None else ()
    y = Axis(0.0, 1.0, (0.0, 0.25, 0.5, 0.75, 1.0), "share of steps", percent=True)
    chart = Chart(
        columns,
        y,
        title=f"Lens top-1 = the chosen token, over {over}",
        sub=final,
        rules=rules,
        height=180,
        label_every=every,
        x_title="layer (0 = embeddings)",
    )
    return figure_html(chart, cls="lens-agreement")


def run_curve_note(agreement) -> str:
    """Above the whole run's curve (a decoding.lens.RunAgreement): how it was read, what it cost, and what its top
    end means: the final layer's own share is 100% only where every written token was its top-1."""
    misses = round((1 - agreement.final_share) * agreement.steps)
    if misses:
        top = (
            f"{agreement.final_share:.0%}: {count(misses, 'written token')} the final layer did not rank first "
            "(the sampler drew another token, or one was forced; in a near-tie, this one pass and the step's own can "
            "also differ in the last bits), so even the last layer misses them"
        )
    else:
        top = "100%: every written token was the final layer's top-1, as in any greedy run"
    return (
        f"Over the whole run, {count(agreement.steps, 'step')}: one more pass over its text (prompt and written "
        "tokens, no cache, every layer's hidden state), then the lens at each position that chose a token, compared "
        f"with the token the run wrote there. <span id='lens-run-ms'>{agreement.ms:.0f}</span> ms on this server's "
        f"{agreement.device} ({model_label(agreement.model)}, {agreement.dtype}), once per run. The last point is the "
        f"final layer's own share, {top}."
    )


def exit_rows_html(check, exit_layer: int, layers: int, greedy: bool, top: int = 5) -> str:
    """A round's first guess (a decoding.speculative.records.Check): the draft's distribution, which is the lens at
    layer L, beside the final layer's, their top tokens each; the target's choice outlined in both."""
    rows = []
    for name, col in ((f"layer {exit_layer} (the draft: the lens at L)", 3), (f"layer {layers} (final)", 2)):
        best = sorted(check.top, key=lambda t: -t[col])[:top]
        cells = "".join(_cell(t[0], t[1], t[col], t[0] == check.target_id, "the target's choice") for t in best)
        rows.append(f"<tr><th>{html.escape(name)}</th>{cells}</tr>")
    kept = "kept" if check.accepted else "rejected"
    after = "" if greedy else " (after the sampler settings)"
    return (
        f"<style>{CSS}</style><p>This round's first guess was <b>{kept}</b>: the draft at layer {exit_layer} is the "
        f"logit lens of that layer{after}; the target keeps its guess when the final layer agrees.</p>"
        f"<table class='lens-table' id='lens-table'><tbody>{''.join(rows)}</tbody></table>"
    )


def first_guess_line(kept: int, agreed: int, guessed: int, exit_layer: int, greedy: bool) -> str:
    """Over a run: first guesses kept, beside how often the lens at L picked the final token (HTML, for the speculative
    tab's round view)."""
    if not guessed:
        return ""
    same = (
        " In greedy rounds these are one event: a first guess is kept exactly when the lens agrees." if greedy else ""
    )
    return (
        f"<b>First guesses kept:</b> {kept} of {count(guessed, 'round')} ({kept / guessed:.0%}). <b>The lens at layer "
        f"{exit_layer} picked the final token:</b> {agreed} of {guessed} ({agreed / guessed:.0%}).{same}"
    )
