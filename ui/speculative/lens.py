"""The speculative tab's tie to the logit lens (decoding.lens): the early-exit draft at layer L is the lens at L, so
each round shows that row beside the final one, and the run its first guesses kept beside the lens's agreement.
Drawn from the round's own records (no pass of its own), in the round's view: the same answer as the round's chips
(until these were an event of their own after each round, started by the chips' change)."""

from decoding.lens import first_guesses
from decoding.speculative.drafts import layer_count
from visuals import lens as visuals


def exit_parts(run) -> tuple[str, str]:
    """The last round's first guess beside the final layer, and the run's agreement line; both empty for prompt
    lookup (it has no layers to read)."""
    if run.draft is None or not run.rounds:
        return "", ""
    layer, layers, greedy = run.draft.layers, layer_count(run.lm), run.settings.greedy
    last = run.rounds[-1]  # the run's last round may have had no room left to guess
    rows = visuals.exit_rows_html(last.checks[0], layer, layers, greedy) if last.drafted else ""
    return rows, visuals.first_guess_line(*first_guesses(run.rounds), layer, greedy)
