"""The next-token distribution: the model's top-N candidates, each bar coloured by its fate.

By default the bars are what the next token is drawn from: the probabilities after the learner's settings
(penalties, temperature, truncation), on a fixed 0-1 axis, so temperature 2 visibly flattens them; a dash beside
each bar is the model's own probability, and a removed token is an empty hatched outline at its model probability.
Probabilities are over the WHOLE vocabulary (the top N are never renormalised among themselves), so the bars of a
flat distribution are all short and the missing mass is visible.
The thresholds the truncating samplers used are drawn on the chart: where top-k cuts, the
cumulative mass top-p stops at, and min-p's floor relative to the top token.
"""

import itertools
import math

from decoding.stages import MIN_P, TEMPERATURE, TOP_K, TOP_P
from decoding.trace import Step
from visuals.chart import Axis, Bar, Chart, Column, Curve, Html, Key, Mark, Rule, figure_html, nice_axis
from visuals.glossary import term
from visuals.theme import CHOSEN, FORCED, KEPT, REMOVED, STAGE_LABELS, TEXT, fate_colour
from visuals.tokens import visible_token

MODES = ("after your settings", "model probability", "raw logits")
NEAR_TIE = 0.05  # a top-1/top-2 probability gap below this is where runs fork
_AXIS = {
    MODES[0]: "probability after your settings",
    MODES[1]: "model probability (whole vocabulary)",
    MODES[2]: "logit",
}
MODEL_MARK = "the model's own probability"


def near_tie(step: Step) -> tuple[float, bool]:
    """The model's top-1 minus top-2 probability, and whether that is a near-tie."""
    probs = sorted((c.prob_before for c in step.top), reverse=True)
    gap = probs[0] - probs[1] if len(probs) > 1 else 1.0
    return gap, gap < NEAR_TIE


def shown_candidates(step: Step, n: int, chosen: bool = True) -> list:
    """The `n` most probable candidates by the model's probability, plus the chosen token if it ranked lower."""
    shown = sorted(step.top, key=lambda c: -c.prob_before)[:n]
    pick = step.candidate(step.token_id)
    if chosen and pick is not None and pick not in shown:
        shown.append(pick)
    return shown


def bar_value(c, mode: str) -> float:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return c.prob_after if mode == MODES[0] else c.prob_before if mode == MODES[1] else c.logit


def distribution_figure(step: Step, mode: str = MODES[0], chosen: bool = True, n: int = 20) -> str:
    """Top-`n` bars of `step` (a recorded step, or a preview when `chosen` is False), as an HTML chart
    (visuals.chart): a column per token, which a click picks (its token id, `data-key`)."""
    top = shown_candidates(step, n, chosen)
    values = [bar_value(c, mode) for c in top]
    labels = [f"{visible_token(c.text)}" + ("" if i < n else f" (#{step.rank})") for i, c in enumerate(top)]
    probabilities = mode != MODES[2]
    columns = tuple(
        Column(
            label=label,
            bars=(_bar(c, value, step, chosen, mode),),
            mark=Mark(MODEL_MARK, c.prob_before) if mode == MODES[0] else None,
            key=c.id,
        )
        for c, value, label in zip(top, values, labels)
    )
    if probabilities:  # a fixed axis: a flatter distribution looks flatter, never rescaled back to full height
        y = Axis(0.0, 1.02, (0.0, 0.2, 0.4, 0.6, 0.8, 1.0), _AXIS[mode])
    else:
        y = nice_axis(max(values, default=1.0), min(0.0, min(values, default=0.0)), title=_AXIS[mode])
    rules, curve = _thresholds(step, values) if probabilities else ((), None)
    head, sub = _title(step, chosen)
    return figure_html(
        Chart(
            columns=columns,
            y=y,
            title=head,
            sub=sub,
            legend=_legend(top, step, chosen, mode, curve is not None),
            rules=rules,
            curve=curve,
            y2=CUMULATIVE if curve is not None else None,
            height=215,  # the plot; with its title, legend and labels the chart fits under the buttons at 1280x720
            vertical_labels=True,
        ),
        cls="distribution",
    )


# the cumulative mass's axis, on the right: top-p stops where it crosses the top-p line
CUMULATIVE = Axis(0.0, 1.05, (0.0, 0.5, 1.0))


def _bar(c, value: float, step: Step, chosen: bool, mode: str) -> Bar:
    """A token's bar, in its fate's colour. A removed token, after your settings, has nothing left: an empty hatched
    outline at the probability the model gave it."""
    fate = _fate(c, step, chosen)
    removed = fate not in ("kept", "chosen", "forced")
    look = "solid"
    if removed:
        look, value = ("outline", c.prob_before) if mode == MODES[0] else ("pale", value)
    name = _series_name(fate, mode)
    hover = f"{visible_token(c.text)} · {name}\nid {c.id}\nmodel p {c.prob_before:.4f}\nafter {c.prob_after:.4f}"
    return Bar(
        series=name,
        value=value,
        colour=_fate_colour(fate),
        look=look,
        hover=f"{hover}\nlogit {c.logit:.2f}",
        data=(c.id, c.prob_before, c.prob_after, c.logit),
    )


def _series_name(fate: str, mode: str) -> str:
    name = _FATE_NAMES.get(fate, f"removed by {STAGE_LABELS.get(fate, fate)}")
    if fate not in _FATE_NAMES and mode == MODES[0]:
        name += " (outline: its model probability)"
    return name


def _legend(top, step: Step, chosen: bool, mode: str, cumulative: bool) -> tuple[Key, ...]:
    """A key per fate on the chart (never colour alone), then the dash and the cumulative line when drawn."""
    keys = []
    for fate in _fates(top, step, chosen):
        removed = fate not in ("kept", "chosen", "forced")
        look = ("outline" if mode == MODES[0] else "pale") if removed else "solid"
        keys.append(Key(_series_name(fate, mode), _fate_colour(fate), look))
    if mode == MODES[0]:
        keys.append(Key(MODEL_MARK, TEXT, "mark"))
    if cumulative:
        keys.append(Key("cumulative mass", REMOVED[TOP_P.name], "line"))
    return tuple(keys)


_FATE_NAMES = {"kept": "kept", "chosen": "chosen", "forced": "forced by you"}


def _fate(c, step: Step, chosen: bool) -> str:
    if chosen and c.id == step.token_id:
        return "forced" if step.forced else "chosen"
    return c.removed_by or "kept"


def _fates(top, step: Step, chosen: bool) -> list[str]:
    order = ["chosen", "forced", "kept", *REMOVED]
    present = {_fate(c, step, chosen) for c in top}
    return [f for f in order if f in present] + sorted(present - set(order))


def _fate_colour(fate: str) -> str:
    if fate in ("chosen", "forced", "kept"):
        return {"chosen": CHOSEN, "forced": FORCED, "kept": KEPT}[fate]
    return fate_colour(fate)


def _thresholds(step: Step, values: list[float]) -> tuple[tuple[Rule, ...], Curve | None]:
    """Where top-k cuts, the cumulative mass top-p stops at, and min-p's floor; none under greedy."""
    s = step.settings
    if s.get(TEMPERATURE.field, TEMPERATURE.neutral) == 0:
        return (), None
    rules, curve = [], None
    k = s.get(TOP_K.field, TOP_K.neutral)
    if 0 < k < len(values):
        rules.append(Rule(f"top-k = {k}", REMOVED[TOP_K.name], x=k))
    top_p = s.get(TOP_P.field, TOP_P.neutral)
    if top_p < 1.0:
        curve = Curve("cumulative mass", tuple(itertools.accumulate(values)), REMOVED[TOP_P.name])
        rules.append(Rule(f"top-p = {top_p:g}", REMOVED[TOP_P.name], y=top_p, axis="y2", dash="dotted"))
    min_p = s.get(MIN_P.field, MIN_P.neutral)
    if min_p > 0 and values:
        rules.append(Rule(f"min-p floor = {min_p:g} × top", REMOVED[MIN_P.name], y=min_p * max(values)))
    return tuple(rules), curve


def _title(step: Step, chosen: bool) -> tuple[str, str]:
    """The chart's title (which step, the model's entropy, the top-1/top-2 gap) and the line under it (what was
    chosen)."""
    gap, tie = near_tie(step)
    head = f"step {step.index + 1}" if chosen else f"next token (step {step.index + 1}, not chosen yet)"
    # the model's own distribution, before temperature and the filters: a knob moved leaves it as it is
    bits = f"{step.entropy_bits:.2f} bits" if math.isfinite(step.entropy_bits) else "n/a"
    entropy = f"model's {term('entropy')} {bits}"
    fork = " ⚠ near-tie: runs fork here" if tie else ""
    pick = ""
    if chosen:
        how = "forced" if step.forced else "chosen"
        pick = f"{how}: {visible_token(step.token_text)} (model p = {probability(step.prob_before)}, rank {step.rank})"
    # the two numbers a beginner meets first, their words glossary terms that open on a tap
    return Html(f"{head} · {entropy} · {term('top-1 − top-2 gap')} {gap:.3f}{fork}"), pick


def candidate_choices(step: Step, n: int = 20) -> list[tuple[str, int]]:
    """(label, id) pairs of the top-`n` candidates, for a 'force this token' picker."""
    top = sorted(step.top, key=lambda c: -c.prob_before)[:n]
    return [(f"#{i + 1} {visible_token(c.text)}  (p = {probability(c.prob_before)})", c.id) for i, c in enumerate(top)]


def probability(p: float) -> str:
    """A probability with three decimals, or "< 0.001" when it would print as 0.000: a token the model gave next
    to nothing was still given something."""
    return "< 0.001" if 0 < p < 0.0005 else f"{p:.3f}"
