"""The speculative tab's handlers and the server-side store of live runs.

A `SpecRun` holds the target's KV cache (and the early-exit draft's), so it never goes into `gr.State`: the page
keeps a short session id and `RUNS` maps it to the run, freeing idle ones after a time to live. Every forward pass
of a round runs inside `model_turn`, so a class's batched steps go between rounds.
"""

import uuid
from dataclasses import dataclass

from decoding import values
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt, token_texts
from decoding.speculative.baseline import Comparison, plain_decode
from decoding.speculative.drafts import layer_count
from decoding.speculative.records import EARLY_EXIT, PROMPT_LOOKUP, acceptance_by_position, summary
from decoding.speculative.run import SpecRun
from decoding.watch import Watch
from ui.context import CHAT, AppConfig, get_model, model_turn, pass_turn
from ui.events import PROGRESS
from ui.sessions import STORE, spec_run_bytes
from visuals import speculative as figs
from visuals.speculative_captions import round_caption, run_caption, speedup_caption
from visuals.theme import empty_figure

SOURCES = {"prompt lookup": PROMPT_LOOKUP, "early exit (first L layers)": EARLY_EXIT}
MAX_K_UI, MAX_NEW_UI = 12, 160
MAX_PROMPT_TOKENS = 2048  # a run's caches stay under ~100 MiB (the bundled model: 45 KiB per token in float32)
LABEL = "speculative decoding"
ROUND_BLANK = "<p class='spec-gap'>Press <b>Prefill</b>, then <b>Round</b>: the guesses appear here.</p>"


@dataclass
class Spec:
    key: tuple  # what the run was started with
    run: SpecRun
    context: list[str]  # the token text of every id in the run so far
    comparison: Comparison | None = None


RUNS = STORE.kind(
    "speculative run",
    bytes_of=lambda spec: spec_run_bytes(spec.run),
    again="press Prefill",
    smaller="use a shorter prompt or fewer max new tokens",
)


def release_spec(sid: str | None) -> None:
    """gr.State's delete_callback: a plain function, so gradio's config copy never deep-copies the runs."""
    RUNS.release(sid)


def _key(config: AppConfig, text, template, source, k, layer, max_new, temperature, top_k, top_p, penalty, order,
         seed) -> tuple:  # fmt: skip
    """The controls checked, as (model, prompt ids, source, K, L, max new, settings, seed); ValueError names one."""
    lm = get_model(config)
    source = SOURCES.get(values.choice("draft source", source, list(SOURCES)))
    k = values.whole("draft tokens K", k, 1, MAX_K_UI)
    layers = layer_count(lm)
    layer = (
        values.whole("exit layer L", layer, 1, layers - 1, f"the model has {layers} layers")
        if source == EARLY_EXIT
        else None
    )
    max_new = values.whole("max new tokens", max_new, 1, MAX_NEW_UI)
    seed = values.whole("seed", seed, 0, 2**31 - 1)
    settings = SamplerSettings(
        temperature=values.real(temperature), top_k=values.integral(top_k), top_p=values.real(top_p),
        repetition_penalty=values.real(penalty), order=order,
    )  # fmt: skip
    prompt = encode_prompt(lm.tokenizer, text, chat=template == CHAT, context_length=lm.context_length)
    if len(prompt.ids) > MAX_PROMPT_TOKENS:
        raise ValueError(f"the prompt is {len(prompt.ids):,} tokens; this tab takes up to {MAX_PROMPT_TOKENS:,}")
    return (lm.model_id, tuple(prompt.ids), source, k, layer, max_new, settings, seed)


def _start(config: AppConfig, sid, key: tuple) -> tuple[str, Spec]:
    lm = get_model(config)
    _, ids, source, k, layer, max_new, settings, seed = key
    run = SpecRun(lm, list(ids), settings, source=source, draft_tokens=k, exit_layer=layer, seed=seed,
                  max_new_tokens=max_new)  # fmt: skip
    with model_turn(lm, LABEL):
        run.prefill()
    sid = sid or uuid.uuid4().hex
    spec = Spec(key, run, token_texts(lm.tokenizer, list(ids)))
    RUNS.put(sid, spec)
    return sid, spec


def _current(config: AppConfig, sid, controls) -> tuple[str, Spec]:
    """This session's run, or a fresh prefilled one when there is none or a control changed since it began."""
    key = _key(config, *controls)
    spec = RUNS.get(sid)
    if spec is None or spec.key != key:
        return _start(config, sid, key)
    return sid, spec


def _round(config: AppConfig, spec: Spec) -> None:
    lm = get_model(config)
    with model_turn(lm, LABEL):  # the draft's passes and the verify pass, between the scheduler's ticks
        spec.run.round()
    spec.context = spec.context[: spec.run.rounds[-1].context_len] + token_texts(
        lm.tokenizer, spec.run.ids[spec.run.rounds[-1].context_len :]
    )


def prefill(config: AppConfig, sid, *controls):
    RUNS.release(sid)
    sid, spec = _start(config, sid, _key(config, *controls))
    return view(sid, spec, get_model(config))


def step(config: AppConfig, sid, *controls):
    sid, spec = _current(config, sid, controls)
    _round(config, spec)
    return view(sid, spec, get_model(config))


def run_to_end(config: AppConfig, sid, *controls, progress=PROGRESS):
    """The remaining rounds, then plain decoding on the same prompt and settings, timed side by side."""
    sid, spec = _current(config, sid, controls)
    run, lm = spec.run, get_model(config)
    while not run.done:
        progress((len(run.generated), run.max_new), desc=f"round {len(run.rounds) + 1}")
        _round(config, spec)
    progress(0.99, desc="plain decoding, for comparison")
    with model_turn(lm, LABEL):
        plain = plain_decode(lm, run.result.prompt_ids, run.settings, run.max_new, spec.key[-1],
                             Watch(between_passes=pass_turn(lm)))  # fmt: skip
    spec.comparison = Comparison(run.result, plain)
    return view(sid, spec, lm)


def back(config: AppConfig, sid):
    spec = RUNS.get(sid)
    if spec is None:
        raise ValueError("there is no run in this session: press Prefill to start one")
    spec.run.back()
    spec.context = spec.context[: len(spec.run.ids)]
    spec.comparison = None
    return view(sid, spec, get_model(config))


def reset(sid):
    RUNS.release(sid)
    return blank()


def blank() -> tuple:
    return (
        None, "", ROUND_BLANK, empty_figure("Each guess, judged by the target, appears here", 400),
        empty_figure("The distribution that decided the round appears here", 400),
        figs.run_figure([], 1, []), "", figs.timeline_figure([], 0, 0, []), "", "",
    )  # fmt: skip


def view(sid: str, spec: Spec, lm) -> tuple:
    """(session id, status, round chips, verify figure, decisive figure, run figure, run text, time line, speed-up
    text, the text so far)."""
    run = spec.run
    where = f"{lm.label}, {lm.dtype_name} on {lm.device}"
    source_label = "Prompt lookup" if run.draft is None else f"The first {run.draft.layers} layers"
    text = lm.tokenizer.decode(run.generated, skip_special_tokens=True)
    written = f"**Written so far** ({len(run.generated)} of at most {run.max_new} tokens): {text or '∅'}"
    if run.done:
        written += f"  \n**Stopped:** {run.result.stop_reason}."
    stats = summary(run.rounds)
    run_md = run_caption(stats, "")
    by_pos = acceptance_by_position(run.rounds, run.k)
    if not run.rounds:
        status = f"**Prefilled** {len(run.result.prompt_ids) - 1} prompt tokens in {run.result.prefill_ms:.0f} ms. "
        status += "Press **Round**: the draft guesses, the target checks every guess in one pass."
        return (sid, status, ROUND_BLANK, *blank()[3:5], figs.run_figure([], run.k, by_pos), run_md,
                *blank()[7:9], written)  # fmt: skip
    rnd = run.rounds[-1]
    status = round_caption(rnd, run.settings.greedy, source_label)
    chips = figs.round_html(spec.context[: rnd.context_len], rnd, run.draft.layers if run.draft else None)
    verify = figs.verify_figure(rnd, run.settings.greedy)
    decisive = figs.decisive_figure(rnd)
    timeline, speed = figs.timeline_figure([], 0, 0, []), ""
    if spec.comparison is not None:
        cmp = spec.comparison
        timeline = figs.timeline_figure(run.rounds, run.result.prefill_ms, cmp.plain.prefill_ms, cmp.plain.token_ms)
        speed = speedup_caption(cmp.to_dict(), where)
    run_fig = figs.run_figure(run.rounds, run.k, by_pos)
    return sid, status, chips, verify, decisive, run_fig, run_md, timeline, speed, written
