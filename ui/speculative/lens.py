"""The speculative tab's tie to the logit lens (decoding.lens): the early-exit draft at layer L is the lens at L, so
each round shows that row beside the final one, and the run its first guesses kept beside the lens's agreement.
Drawn from the round's own records after each round (no pass of its own), whenever the round's chips change."""

import gradio as gr

from decoding.lens import first_guesses
from decoding.speculative.drafts import layer_count
from ui.speculative import handlers as h
from visuals import lens as visuals


def layout() -> tuple[gr.HTML, gr.Markdown]:
    return gr.HTML(elem_id="speculative-exit-lens"), gr.Markdown(elem_id="speculative-exit-agree")


def draw(sid) -> tuple[str, str]:
    try:
        spec = h.RUNS.get(sid)
    except ValueError:  # freed: the round's own handler says so
        return "", ""
    run = spec.run if spec is not None else None
    if run is None or run.draft is None or not run.rounds:
        return "", ""
    layer, layers, greedy = run.draft.layers, layer_count(run.lm), run.settings.greedy
    last = run.rounds[-1]  # the run's last round may have had no room left to guess
    rows = visuals.exit_rows_html(last.checks[0], layer, layers, greedy) if last.drafted else ""
    return rows, visuals.first_guess_line(*first_guesses(run.rounds), layer, greedy)


def wire(c) -> None:
    """After each round (the chips change), the lens at L beside the final layer, and the run's agreement."""
    c.view.chips.change(draw, c.sid, list(c.exit_lens), show_progress="hidden", concurrency_limit=None)
