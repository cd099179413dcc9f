"""Handlers of the batching lab: check the inputs, call decoding.nondeterminism.experiment, call visuals.batching and
visuals.batching_captions, return. Progress goes to the progress bar; Cancel stops the run at its next forward pass."""

from dataclasses import replace

import gradio as gr

from decoding import values
from decoding.nondeterminism import batchmates
from decoding.nondeterminism import experiment as lab
from decoding.nondeterminism.tally import many_runs
from decoding.watch import Cancelled
from ui.context import AppConfig, get_model, model_turn, pass_turn
from ui.events import CancelFlags
from visuals import batching as vis
from visuals import batching_captions as captions
from visuals.tally import tally_figure

BATCH_CHOICES = [2, 4, 8, 16, 32]
CANCEL = CancelFlags()


def checked(prompt: str, condition: str, dtype: str, sizes, new_tokens) -> tuple:
    """The controls' values (batch 1 added to the sizes), or a ValueError naming the bad one and what is allowed."""
    sizes = [1, *sorted({int(s) for s in values.picked("batch sizes", sizes, BATCH_CHOICES)})]
    new_tokens = values.whole("new tokens", new_tokens, 1, batchmates.MAX_NEW_TOKENS)
    batchmates.check_inputs(prompt, sizes, condition, new_tokens, dtype)  # before a model is loaded in `dtype`
    return prompt, condition, dtype, sizes, new_tokens


def _model(config: AppConfig, dtype: str):
    return get_model(replace(config, dtype=dtype))


def run_lab(config: AppConfig, prompt, condition, dtype, sizes, new_tokens, invariant, progress, request):
    """Run button: the experiment, then every view of it."""
    prompt, condition, dtype, sizes, new_tokens = checked(prompt, condition, dtype, sizes, new_tokens)
    app_model = get_model(config)
    watch = CANCEL.watch(request, progress, between_passes=pass_turn(app_model))
    try:
        with model_turn(app_model, "the temperature-0 experiment"):
            exp = lab.run_batching_experiment(_model(config, dtype), prompt, sizes, condition, new_tokens,
                                              bool(invariant), watch.on_progress, watch)  # fmt: skip
    except Cancelled:
        gr.Warning("Run cancelled: the charts still show the previous run.")
        return (gr.skip(),) * len(empty_views())
    return views(exp)


def many(config: AppConfig, prompt, condition, dtype, sizes, new_tokens, progress, request):
    """Many runs button: several prompts x batch sizes x both conditions, distinct completions counted."""
    prompt, _, dtype, sizes, new_tokens = checked(prompt, condition, dtype, sizes, new_tokens)
    app_model = get_model(config)
    watch = CANCEL.watch(request, progress, between_passes=pass_turn(app_model))
    prompts = [prompt, *[p for p in lab.DEFAULTS["many_prompts"] if p != prompt]][: len(lab.DEFAULTS["many_prompts"])]
    try:
        with model_turn(app_model, "the temperature-0 tally"):
            tally = many_runs(_model(config, dtype), prompts, sizes, batchmates.CONDITIONS, new_tokens,
                              watch.on_progress, watch)  # fmt: skip
    except Cancelled:
        gr.Warning("Many runs cancelled.")
        return gr.skip(), gr.skip()
    groups = [(p["prompt"], p["completions"]) for p in tally.per_prompt]
    sources = [p["sources"] for p in tally.per_prompt]
    return tally_figure(groups, f"{config.model_id} · {dtype}", sources=sources), captions.tally_caption(
        tally, len(sizes)
    )


def empty_views() -> tuple:
    """What the run's outputs show before the first run."""
    return ("*No run yet: press **Run** (under a minute on a CPU).*", vis.texts_html(None, []), "",
            vis.noise_figure(None, []), "", vis.scatter_figure([]), "", captions.causes_markdown(), "",
            "*Press **Run**: with batch-invariant mode ticked, each batch reruns with batch-1 shapes.*")  # fmt: skip


def views(exp) -> tuple:
    """(headline, texts, texts caption, noise figure, caption, scatter, caption, causes, the fix, its caption)."""
    label = f"{exp.model} · {exp.device} · {exp.dtype} · {exp.condition}"
    fix = vis.texts_html(exp.solo, exp.invariant_rows) if exp.invariant_rows else ""
    return (
        captions.headline(exp), vis.texts_html(exp.solo, exp.rows), captions.texts_caption(exp),
        vis.noise_figure(exp.solo, exp.rows, label), captions.noise_caption(exp),
        vis.scatter_figure(exp.rows, label), captions.scatter_caption(exp),
        captions.causes_markdown(exp), fix, captions.fix_caption(exp),
    )  # fmt: skip
