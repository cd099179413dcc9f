"""The sequence as token chips, and the decode loop as a diagram with the current phase lit.

Chips make token boundaries visible (a leading space shows as ␣), and each generated chip is shaded
by the probability it was chosen with: pale chips are where the run could easily have gone another
way. Both are plain HTML strings; every piece of token text is escaped.
"""

import html

from decoding.trace import Step
from visuals.distribution import probability
from visuals.glossary import term
from visuals.parts import Parts
from visuals.theme import CHOSEN, FORCED, KEPT
from visuals.tokens import BYTES_NOTE, has_bytes, visible_token

PHASES = ("context", "logits", "softmax", "sample", "append")
# the phases a student may not know by name, marked with their explanation
LOOP_TERMS = {"logits": term("logit", "logits"), "softmax": term("softmax")}


def _visible(text: str) -> str:
    return html.escape(visible_token(text))


def _chip(text: str, title: str, style: str, cls: str) -> str:
    return f'<span class="tok {cls}" title="{html.escape(title)}" style="{style}">{_visible(text)}</span>'


# a long prompt shows its start and its end, the middle as one "…" chip: a 3,000-word prompt drawn whole made the
# page 25,000 px long, twice (this strip and what the model reads)
PROMPT_HEAD, PROMPT_TAIL = 12, 36


def prompt_chips(prompt_tokens: list[str], prompt_ids: list[int]) -> list[str]:
    """One chip per prompt token (grey), a long prompt's middle as one chip that says how many it stands for."""
    chips = [
        _chip(t, f"prompt token · id {i} · position {n}", "", "prompt")
        for n, (t, i) in enumerate(zip(prompt_tokens, prompt_ids))
        if n < PROMPT_HEAD or n >= len(prompt_ids) - PROMPT_TAIL
    ]
    hidden = len(prompt_ids) - PROMPT_HEAD - PROMPT_TAIL
    if hidden > 1:
        gap = f"… {hidden:,} more prompt tokens …"
        chips.insert(PROMPT_HEAD, f'<span class="tok gap" title="{gap}">{gap}</span>')
    return chips


def step_chip(s: Step) -> str:
    """A generated token's chip, shaded by the probability it was chosen with (dashed when forced)."""
    colour = FORCED if s.forced else CHOSEN
    alpha = 0.15 + 0.85 * max(0.0, min(1.0, s.prob_after))
    title = (
        f"step {s.index + 1} · id {s.token_id} · chosen with p = {probability(s.prob_after)} "
        f"(model p = {probability(s.prob_before)}) · rank {s.rank}" + (" · forced by you" if s.forced else "")
    )
    style = f"background:{_rgba(colour, alpha)};" + (f"outline:2px dashed {FORCED};" if s.forced else "")
    return _chip(s.token_text, title, style, "gen forced" if s.forced else "gen")


def chips_parts(prompt_tokens: list[str], prompt_ids: list[int], steps: list[Step], held_text: str = "") -> Parts:
    """Prompt chips (grey), then one chip per generated step shaded by its chosen probability, then the text held
    back; as `Parts`, so a new step sends its one chip (ui/patch.py)."""
    chips = (*prompt_chips(prompt_tokens, prompt_ids), *(step_chip(s) for s in steps))
    why = "held back: could still be the start of a stop string"
    held = f'<span class="tok held" title="{why}">{_visible(held_text)}</span>' if held_text else ""
    texts = [*prompt_tokens, *(s.token_text for s in steps)]
    legend = (
        "grey = prompt · shaded = generated (darker = chosen with higher probability)"
        f' · <span style="outline:2px dashed {FORCED}">dashed</span> = forced · ␣ = leading space · ↵ = newline'
        + (f" · {html.escape(BYTES_NOTE)}" if has_bytes(texts) else "")
    )
    whole = (
        f'<div class="chips">{"".join(chips)}</div><div class="tok-held">{held}</div>'
        f'<div class="tok-legend">{legend}</div>'
    )
    return Parts(
        html=whole,
        shape=("chips",),
        strips={".chips": chips},
        slots={".tok-held": held, ".tok-legend": legend},
    )


def chips_html(prompt_tokens: list[str], prompt_ids: list[int], steps: list[Step], held_text: str = "") -> str:
    """The chips as one piece of HTML (`chips_parts`), for a strip drawn whole."""
    return chips_parts(prompt_tokens, prompt_ids, steps, held_text).html


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:.2f})"


def loop_html(phase: str, step_number: int, context_len: int) -> str:
    """context → logits → softmax → sample → append, with `phase` lit, and what one step costs."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    boxes = []
    for p in PHASES:
        lit = f"background:{KEPT};color:white;" if p == phase else ""
        boxes.append(f'<span class="loop-box" style="{lit}">{LOOP_TERMS.get(p, p)}</span>')
    arrow = '<span class="loop-arrow">→</span>'
    caption = (
        f"step {step_number}: one {term('forward pass')} over {context_len} tokens of context, one token"
        if step_number > 0
        else f"prefill: one {term('forward pass')} over the whole prompt ({context_len} tokens)"
        if context_len > 0
        else f"press Prefill: one {term('forward pass')} over the whole prompt fills the {term('KV cache')}"
    )
    loop = f'<div class="loop">{arrow.join(boxes)}<span class="loop-arrow">↺</span></div>'
    return f'{loop}<div class="loop-caption">{caption}</div>'


def stop_html(
    stop_reason: str | None,
    held_text: str,
    text: str,
    live: bool = True,
    running: tuple[int, int] | None = None,
    halted: float | None = None,
) -> str:
    """Why the run stopped, in words, and what to press next; while it has not stopped, whether it is running (a Run N
    under way: `running` is (tokens made, tokens asked for), drawn as words and a bar), stopped by the person
    (`halted`: Stop, the seconds from the press reaching the server to the run's end) or waiting for the next press.
    Held-back text shown as such."""
    reasons = {
        "eos": "the model chose its end-of-sequence token",
        "max_new_tokens": "it reached max new tokens",
        "stop_sequence": "a stop string appeared (it is cut from the text)",
    }
    if stop_reason is None and running is not None:
        made, asked = running
        head = (
            f"<b>running</b>: token {made:,} of at most {asked:,} · press Stop to end it "
            f'<progress class="step-progress" value="{made}" max="{max(asked, 1)}"></progress>'
        )
    elif stop_reason is None and halted is not None:
        head = (
            f"<b>stopped by you</b>, {halted:.2f} s after you pressed Stop (the step under way finished): press Step "
            "or Run to end to go on"
        )
    elif stop_reason is None:
        head = "<b>waiting for you</b>: no stop condition met yet; press Step for the next token"
    else:
        again = "press Prefill to run again with the new settings" if live else "press Prefill to run it live"
        head = f"<b>finished</b>: {html.escape(reasons.get(stop_reason, stop_reason))} · {again}"
    held = f' · <span class="held">held back: {_visible(held_text)}</span>' if held_text else ""
    return f'<div class="stop" data-stop="{html.escape(stop_reason or "")}">{head}{held}</div>'


CSS = """
.chips { display:flex; flex-wrap:wrap; gap:3px; font-family: ui-monospace, monospace;
  font-size: calc(17px * var(--lab-type, 1)); line-height:1.9; }
.tok { padding:0 4px; border:1px solid rgba(128,128,128,.45); border-radius:4px; white-space:pre; }
.tok.prompt { background: rgba(128,128,128,.18); }
.tok.held { border-style:dashed; opacity:.7; }
.tok-held { display: inline; }
.tok.gap { font-style: italic; border-style: dotted; }
.tok-legend, .loop-caption { font-size: calc(14px * var(--lab-type, 1)); opacity:.8; margin-top:4px; }
.loop { display:flex; align-items:center; gap:4px; flex-wrap:wrap; font-size: calc(16px * var(--lab-type, 1)); }
.loop-box { padding:3px 10px; border:1px solid rgba(128,128,128,.6); border-radius:6px; }
.loop-arrow { opacity:.7; }
.stop { font-size: calc(16px * var(--lab-type, 1)); }
.step-progress { width: 10em; height: .8em; vertical-align: middle; margin-left: 6px; }
.held { border:1px dashed rgba(128,128,128,.8); padding:0 4px; }
"""
