"""The constrained tab's handlers: check the browser's values, call decoding.constrained, draw with
visuals.constrained, return.

The page keeps only a run id; the run (its KV cache and its grammar matcher) lives in `sessions.STORE` with every
other live run, under the same caps. Its steps ride the shared scheduler's ticks like the Step tab's; the
N-samples measurement takes its turn on the model between ticks. A ValueError names the bad value and is shown
in the browser; the session's run is untouched by it.
"""

import gradio as gr

from decoding import values
from decoding.constrained.kinds import KIND_LABELS, Constraint
from decoding.constrained.measure import MAX_SAMPLES, compare
from decoding.constrained.presets import PRESETS
from decoding.constrained.run import ConstrainedRun, calls_saved
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from ui.context import AppConfig, get_model, model_turn, pass_turn, scheduler_for
from ui.events import PROGRESS, CancelFlags
from ui.sessions import STORE, Entry
from visuals import constrained as draw
from visuals.theme import empty_figure

KINDS = {label: kind for kind, label in KIND_LABELS.items()}  # the radio shows labels
MAX_NEW_UI, MAX_TOP_K, MAX_SEED = 96, 1000, 2**32 - 1
CHART_BLANK = "Press Step: the grammar's mask joins the sampler's stages"
MEASURE_BLANK = "Press Sample: the same prompt N times without, then with the constraint"
CANCEL = CancelFlags()


def apply_preset(name):
    if name not in PRESETS:
        return (gr.skip(),) * 5
    p = PRESETS[name]
    return p.prompt, p.constraint.label, p.constraint.text, p.max_new_tokens, f"*What to watch:* {p.watch}"


def settings_from(order, temperature, top_k, top_p) -> SamplerSettings:
    return SamplerSettings(
        temperature=values.real(temperature),
        top_k=values.whole("top-k", top_k, 0, MAX_TOP_K, "0 = off"),
        top_p=values.real(top_p),
        order=order,
    )


def _setup(config: AppConfig, message, kind, text, seed, max_new):
    lm = get_model(config)
    constraint = Constraint(KINDS[values.choice("the constraint kind", kind, list(KINDS))], text)
    prompt = encode_prompt(lm.tokenizer, message, chat=lm.chat, context_length=lm.context_length)
    seed, max_new = values.whole("seed", seed, 0, MAX_SEED), values.whole("max new tokens", max_new, 1, MAX_NEW_UI)
    return lm, constraint, prompt, seed, max_new


def _key(run: ConstrainedRun) -> tuple:
    """What a run was started with: a change in any of these starts a new one."""
    return (run.lm.model_id, tuple(run.prompt.ids), run.grammar.constraint, run.seed, run.trace.max_new_tokens,
            run.fast_forward)  # fmt: skip


def _run(config: AppConfig, run_id, message, kind, text, seed, max_new, fast_forward) -> tuple[str, ConstrainedRun]:
    """This session's run, or a new one (prefilled) when there is none or what it was started with changed."""
    lm, constraint, prompt, seed, max_new = _setup(config, message, kind, text, seed, max_new)
    key = (lm.model_id, tuple(prompt.ids), constraint, seed, max_new, bool(fast_forward))
    entry = _entry(run_id)
    if entry is not None and isinstance(entry.run, ConstrainedRun) and _key(entry.run) == key:
        return run_id, entry.run
    run = ConstrainedRun(lm, prompt, constraint, fast_forward=bool(fast_forward), seed=seed,
                         max_new_tokens=max_new, top_n=20, scheduler=scheduler_for(lm))  # fmt: skip
    run.prefill()
    return STORE.put(Entry(trace=run.trace, run=run), replace=run_id), run


def _entry(run_id) -> Entry | None:
    try:
        return STORE.get(run_id) if run_id else None
    except ValueError:  # expired: a new run starts
        return None


def _advance(run: ConstrainedRun, settings: SamplerSettings, force_id=None) -> None:
    """One decision: a sampled (or your) token, then every token the grammar forces after it."""
    run.step(settings, force_id)
    while not run.done and run.forced():
        run.step(settings)


def step(config: AppConfig, run_id, message, kind, text, seed, max_new, ff, order, temperature, top_k, top_p):
    settings = settings_from(order, temperature, top_k, top_p)
    run_id, run = _run(config, run_id, message, kind, text, seed, max_new, ff)
    if run.done:
        raise ValueError(f"the run has stopped ({run.trace.stop_reason}): press Back, or Reset for a new one")
    _advance(run, settings)
    return view(run_id, run, settings)


def run_to_end(config: AppConfig, run_id, message, kind, text, seed, max_new, ff, order, temperature, top_k, top_p,
               progress=PROGRESS):  # fmt: skip
    settings = settings_from(order, temperature, top_k, top_p)
    run_id, run = _run(config, run_id, message, kind, text, seed, max_new, ff)
    while not run.done:
        progress((len(run.trace.steps), run.trace.max_new_tokens), desc="constrained decoding")
        _advance(run, settings)
    return view(run_id, run, settings)


def force(config: AppConfig, run_id, message, kind, text, seed, max_new, ff, order, temperature, top_k, top_p, token):
    """Your token instead of the pipeline's: one token of the vocabulary, refused (naming the legal ones) if the
    grammar does not allow it here."""
    settings = settings_from(order, temperature, top_k, top_p)
    run_id, run = _run(config, run_id, message, kind, text, seed, max_new, ff)
    if not isinstance(token, str) or token == "":
        raise ValueError("type the token to force (for example yes, or {), then press Force")
    ids = run.lm.tokenizer(token, add_special_tokens=False).input_ids
    if len(ids) != 1:
        raise ValueError(f"{token!r} is {len(ids)} tokens for this tokenizer; type one token")
    if run.done:
        raise ValueError(f"the run has stopped ({run.trace.stop_reason}): press Back first")
    _advance(run, settings, force_id=ids[0])
    return view(run_id, run, settings)


def back(run_id, order, temperature, top_k, top_p):
    """Undo the last decision: the forced tokens after it, then it; the matcher rolls back with the run."""
    settings = settings_from(order, temperature, top_k, top_p)
    entry = STORE.get(run_id)
    run = entry.run
    if not run.trace.steps:
        raise ValueError("nothing to go back to: no token has been generated yet")
    while run.trace.steps and run.trace.steps[-1].grammar_forced:
        run.back()
    if run.trace.steps:
        run.back()
    return view(run_id, run, settings)


def reset(run_id):
    STORE.release(run_id)
    return None, "", draw.answer_html([]), empty_figure(CHART_BLANK, 420), "", ""


def view(run_id, run: ConstrainedRun, settings: SamplerSettings) -> tuple:
    """(run id, status, answer chips, the last sampled step's chart, its mask rows, each engine's order next)."""
    steps = run.trace.steps
    sampled = [s for s in steps if not s.grammar_forced]
    forced = len(steps) - len(sampled)
    status = (
        f"**{len(steps)} tokens**: {len(sampled)} sampled, {forced} forced by the grammar; fast-forward saved "
        f"**{calls_saved(run.trace)} forward passes** · {run.grammar.constraint.label} · "
        f"{'complete' if run.grammar.accepting else 'not complete yet'}"
    )
    if run.done:
        status += f" · **stopped**: {run.trace.stop_reason}"
    chart = draw.step_chart(sampled[-1]) if sampled else empty_figure(CHART_BLANK, 420)
    decode = run.lm.tokenizer.decode
    shown = sampled[-1] if sampled else steps[-1] if steps else None
    rows = draw.mask_rows_markdown(shown, run.lm.vocab_size, lambda i: decode([i])) if shown else ""
    rows += draw.forced_after(steps[shown.index + 1 :]) if shown else ""
    outcomes = run.outcomes(settings)
    note = f"temperature {settings.temperature:g}, top-k {settings.top_k}, top-p {settings.top_p:g}"
    orders = draw.orders_markdown(outcomes, note) if outcomes else "*The next tokens are forced, or the run is done.*"
    return run_id, status, draw.answer_html(steps, run.trace.held_text), chart, rows, orders


def measure(config: AppConfig, message, kind, text, seed, max_new, order, temperature, top_k, top_p, n,
            request: gr.Request = None, progress=PROGRESS):  # fmt: skip
    """N seeded samples without and with the constraint: validity, log-probabilities, the mask's cost."""
    settings = settings_from(order, temperature, top_k, top_p)
    lm, constraint, prompt, seed, max_new = _setup(config, message, kind, text, seed, max_new)
    n = values.whole("samples", n, 1, MAX_SAMPLES)
    watch = CANCEL.watch(request, progress, between_passes=pass_turn(lm))
    with model_turn(lm, "the constrained samples"):
        result = compare(lm, prompt, constraint, settings, n=n, seed=seed, max_new_tokens=max_new, watch=watch)
    if not result.constrained:
        gr.Warning("Cancelled before any constrained sample finished.")
        return empty_figure(MEASURE_BLANK, 300), ""
    if result.cancelled:
        gr.Warning(f"Cancelled: {len(result.constrained)} constrained samples finished; those are shown.")
    head = f"{lm.label} · {lm.device} · {lm.dtype_name} · {n} seeds from {seed} · {settings.order} order\n\n"
    return draw.comparison_figure(result), head + draw.comparison_markdown(result)
