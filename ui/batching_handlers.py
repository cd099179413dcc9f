"""Handlers of the batching lab: check the inputs, call decoding.batching.experiment, call visuals.batching and the
captions, return. Progress goes to the progress bar; Cancel stops the run at its next forward pass."""

import threading
from dataclasses import replace

import gradio as gr

from decoding.batching import batchmates
from decoding.batching import experiment as lab
from decoding.batching.tally import many_runs
from decoding.watch import Cancelled, Watch
from ui.batching_captions import (
    causes_markdown,
    fix_caption,
    headline,
    noise_caption,
    scatter_caption,
    tally_caption,
    texts_caption,
)
from ui.context import AppConfig, get_model
from visuals import batching as vis

BATCH_CHOICES = [2, 4, 8, 16, 32]
_cancel_flags: dict[str, threading.Event] = {}  # session -> "stop please", set by the Cancel button


def checked(prompt: str, condition: str, dtype: str, sizes, new_tokens) -> tuple:
    """The controls' values, or gr.Error naming the bad one and what is allowed."""
    if not (prompt or "").strip():
        raise gr.Error("the prompt is empty: type a few words for the model to continue")
    if condition not in batchmates.CONDITIONS:
        raise gr.Error(f"condition must be one of {', '.join(batchmates.CONDITIONS)}, got {condition!r}")
    if dtype not in batchmates.DTYPE_NAMES:
        raise gr.Error(f"dtype must be one of {', '.join(batchmates.DTYPE_NAMES)}, got {dtype!r}")
    sizes = sorted({int(s) for s in sizes or []})
    if not sizes or not all(2 <= s <= batchmates.MAX_BATCH for s in sizes):
        raise gr.Error(f"pick at least one batch size between 2 and {batchmates.MAX_BATCH}, got {sizes or 'none'}")
    if not (isinstance(new_tokens, (int, float)) and 1 <= new_tokens <= batchmates.MAX_NEW_TOKENS):
        raise gr.Error(f"new tokens must be between 1 and {batchmates.MAX_NEW_TOKENS}, got {new_tokens!r}")
    return prompt, condition, dtype, [1, *sizes], int(new_tokens)


def watch_for(request: gr.Request | None, progress) -> Watch:
    """A Watch that reports to the progress bar and stops when this session's Cancel was pressed."""
    flag = _cancel_flags.setdefault(_session(request), threading.Event())
    flag.clear()
    return Watch(lambda f, msg: progress(f, desc=msg), flag.is_set)


def cancel(request: gr.Request = None) -> None:
    _cancel_flags.setdefault(_session(request), threading.Event()).set()


def _session(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "default"


def _model(config: AppConfig, dtype: str):
    return get_model(replace(config, dtype=dtype))


def run_lab(config: AppConfig, prompt, condition, dtype, sizes, new_tokens, invariant, progress, request):
    """Run button: the experiment, then every view of it."""
    prompt, condition, dtype, sizes, new_tokens = checked(prompt, condition, dtype, sizes, new_tokens)
    watch = watch_for(request, progress)
    try:
        exp = lab.run_experiment(_model(config, dtype), prompt, sizes, condition, new_tokens, bool(invariant),
                                 watch.on_progress, watch)  # fmt: skip
    except Cancelled:
        gr.Warning("Run cancelled: the charts still show the previous run.")
        return (gr.skip(),) * len(empty_views())
    except ValueError as err:
        raise gr.Error(str(err)) from None
    return views(exp)


def many(config: AppConfig, prompt, condition, dtype, sizes, new_tokens, progress, request):
    """Many runs button: several prompts x batch sizes x both conditions, distinct completions counted."""
    prompt, _, dtype, sizes, new_tokens = checked(prompt, condition, dtype, sizes, new_tokens)
    watch = watch_for(request, progress)
    prompts = [prompt, *[p for p in lab.DEFAULTS["many_prompts"] if p != prompt]][: len(lab.DEFAULTS["many_prompts"])]
    try:
        tally = many_runs(_model(config, dtype), prompts, sizes, batchmates.CONDITIONS, new_tokens,
                              watch.on_progress, watch)  # fmt: skip
    except Cancelled:
        gr.Warning("Many runs cancelled.")
        return gr.skip(), gr.skip()
    except ValueError as err:
        raise gr.Error(str(err)) from None
    groups = [(p["prompt"], p["completions"]) for p in tally.per_prompt]
    return vis.tally_figure(groups, f"{config.model_id} · {dtype}"), tally_caption(tally, len(sizes))


def empty_views() -> tuple:
    """What the run's outputs show before the first run."""
    return ("*No run yet: press **Run** (under a minute on a CPU).*", vis.texts_html(None, []), "",
            vis.noise_figure(None, []), "", vis.scatter_figure([]), "", causes_markdown(None), "",
            "*Press **Run**: with batch-invariant mode ticked, each batch reruns with batch-1 shapes.*")  # fmt: skip


def views(exp) -> tuple:
    """(headline, texts, texts caption, noise figure, caption, scatter, caption, causes, the fix, its caption)."""
    label = f"{exp.model} · {exp.device} · {exp.dtype} · {exp.condition}"
    fix = vis.texts_html(exp.solo, exp.invariant_rows) if exp.invariant_rows else ""
    return (
        headline(exp), vis.texts_html(exp.solo, exp.rows), texts_caption(exp),
        vis.noise_figure(exp.solo, exp.rows, label), noise_caption(exp),
        vis.scatter_figure(exp.rows, label), scatter_caption(exp),
        causes_markdown(exp), fix, fix_caption(exp),
    )  # fmt: skip
