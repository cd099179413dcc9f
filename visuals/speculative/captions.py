"""The words beside the speculative figures: what one round did, what a run measured, and when the output
distribution is exactly the target's. Plain data in; the round's and the run's words are HTML (they are drawn in the
tab's two patched views, ui/speculative/view.py), the exactness note Markdown."""

import html

from visuals.glossary import term
from visuals.tokens import visible_token
from visuals.words import count

EXACTNESS = f"""**When is the output exactly what the model alone would write?**
- **Temperature 0 (greedy):** the same tokens as plain greedy decoding, token for token, with any penalty: a guess
  is kept only if it *is* the target's {term("argmax")}, and the penalty at each verified position counts the guesses
  before it, as it would have counted those tokens had they been generated one by one. (The one caveat is floating
  point: a pass over K + 1 tokens can round a {term("logit")} in its last bit differently from a one-token pass, which
  matters only for a near-tie; the tests find none on the prompts here.)
- **Sampling, any temperature, top-k/top-p/min-p/typical/epsilon/eta, penalties, any {term("engine order")}:** every
  emitted token is distributed exactly as p, the target's distribution after that same pipeline, because the rule
  keeps a guess with probability min(1, p/q) and otherwise draws from max(0, p − q). The *draws* differ from a plain
  seeded run (a different use of the random numbers), so the text is a different sample from the same distribution.
- **Not exact:** an accept rule that is looser than min(1, p/q) (accepting any guess in the target's top-k, "typical
  acceptance", ensemble weights), or p computed without the guesses in the penalty context. This lab does neither."""


# why a round had no guess: prompt lookup found nothing to copy; the early-exit draft always guesses while there is
# room, so only the run's last token leaves it none
WHY_NOTHING = {
    "lookup": "no earlier occurrence of the last tokens was followed by more",
    "early exit": "one token was left before max new tokens, so the target writes it alone",
}


def _token(text: str) -> str:
    return html.escape(visible_token(text), quote=False)


def round_caption(rnd, greedy: bool, exit_layer: int | None = None) -> str:
    """What happened in one round, in one paragraph; `exit_layer` L for the early-exit draft, None for prompt lookup."""
    k = len(rnd.drafted)
    source_label = "Prompt lookup" if exit_layer is None else f"The first {exit_layer} layers"
    if k == 0:
        guess = (
            f"<b>{source_label}</b> proposed nothing ({WHY_NOTHING['lookup' if exit_layer is None else 'early exit']})."
        )
    else:
        guess = f"<b>{source_label}</b> guessed {k} token{'s' * (k != 1)}."
    rule = f"equal to the target's {term('argmax')}" if greedy else "kept with probability min(1, p/q): u below the bar"
    rejected = next((c for c in rnd.checks if c.accepted is False), None)
    judged = (
        f" Guess {rejected.index + 1} ({_token(rejected.draft_text)}) failed "
        f"({'the target prefers ' + _token(rejected.target_text) if greedy else f'u = {rejected.uniform:.2f}'}"
        f"{'' if greedy else f', p/q = {rejected.p / rejected.q:.2f}'}); the guesses after it were never looked at."
        if rejected
        else ""
    )
    kept = term("kept", f"{rnd.accepted} of {k} kept")
    bonus_source = {"argmax": "its argmax", "target": "a draw from p", "residual": "a draw from the residual"}
    return (
        f"<b>Round {rnd.index + 1}.</b> {guess} One verify pass read {k + 1} position{'s' * (k != 0)} (the last "
        f"accepted token and the guesses) and checked each guess ({rule}): <b>{kept}</b>.{judged} The target "
        f"adds its own next token, <b>{_token(rnd.bonus_text)}</b> ({bonus_source[rnd.bonus_from]}), so this "
        f"round wrote <b>{rnd.kept} token{'s' * (rnd.kept != 1)} for one pass</b> of the model. {term('KV cache')}: "
        f"{rnd.cache_verified} positions after the verify pass, cropped back to {rnd.cache_cropped}. Time: draft "
        f"{rnd.draft_ms:.0f} ms ({rnd.draft_passes} pass{'es' * (rnd.draft_passes != 1)}), verify {rnd.verify_ms:.0f} "
        f"ms, accept {rnd.accept_ms:.0f} ms."
    )


def run_caption(stats: dict, where: str) -> str:
    """The run so far: rounds, guesses kept, tokens per target pass."""
    if not stats["rounds"]:
        return ""
    return (
        f"<b>{count(stats['tokens'], 'token')} in {count(stats['rounds'], 'target pass', 'target passes')}: "
        f"{stats['tokens_per_target_pass']:.2f} "
        f"tokens per pass</b> (plain decoding: 1.00). Guesses kept: {stats['accepted']} of {stats['drafted']} "
        f"({stats['acceptance_rate']:.0%}). {html.escape(where)}"
    ).strip()


def speedup_caption(cmp: dict, where: str) -> str:
    """The side-by-side measurement, honestly labelled."""
    same = "the <b>same tokens</b>" if cmp["identical"] else "<b>different tokens</b> (expected when sampling)"
    verdict = "faster" if cmp["speedup"] >= 1 else "<i>slower</i>"
    return (
        f"<b>Plain decoding {cmp['plain_ms'] / 1e3:.2f} s, speculative {cmp['speculative_ms'] / 1e3:.2f} s: "
        f"{cmp['speedup']:.2f}× ({verdict})</b>, {same}. Measured just now, one after the other in this session, on "
        f"{html.escape(where)}; each pass timed with a sync before the clock, prefill included on both sides, time "
        "spent waiting for the model's turn (other students' steps) not counted. A shared machine is noisy: run it "
        "twice."
    )
