"""Handlers of the batching lab: check the inputs, call decoding.nondeterminism.experiment, call
visuals.nondeterminism.batches and visuals.nondeterminism.captions, return. Progress goes to the progress bar; Cancel
stops the run at its next forward pass."""

from dataclasses import replace
from typing import NamedTuple

import gradio as gr

from decoding import values
from decoding.nondeterminism import batchmates
from decoding.nondeterminism import experiment as lab
from decoding.nondeterminism.tally import many_runs
from decoding.watch import Cancelled
from ui import gpu
from ui.context import AppConfig
from ui.events import CancelFlags
from visuals.nondeterminism import batches as vis
from visuals.nondeterminism import captions
from visuals.nondeterminism.tally import tally_figure

BATCH_CHOICES = [2, 4, 8, 16, 32]
CANCEL = CancelFlags()


class Asked(NamedTuple):
    """The controls' values, checked; the tab's controls carry the same names."""

    prompt: str
    condition: str
    dtype: str
    sizes: list[int]  # batch 1 (solo) first
    new_tokens: int


class LabView(NamedTuple):
    """What a Run shows; the tab holds a LabView of its components, so outputs go by name."""

    headline: str
    texts: str
    texts_note: str
    noise: object
    noise_note: str
    scatter: object
    scatter_note: str
    causes: str
    fix: str
    fix_note: str


class TallyView(NamedTuple):
    """What Many runs shows."""

    tally: object
    tally_note: str


def checked(prompt: str, condition: str, dtype: str, sizes, new_tokens) -> Asked:
    """The controls' values (batch 1 added to the sizes), or a ValueError naming the bad one and what is allowed."""
    sizes = [1, *sorted({int(s) for s in values.picked("Batch sizes", sizes, BATCH_CHOICES)})]
    new_tokens = values.whole("New tokens", new_tokens, 1, batchmates.MAX_NEW_TOKENS)
    batchmates.check_inputs(prompt, sizes, condition, new_tokens, dtype)  # before a model is loaded in `dtype`
    return Asked(prompt=prompt, condition=condition, dtype=dtype, sizes=sizes, new_tokens=new_tokens)


GPU_SECONDS = 180  # ZeroGPU's estimate for one Run or one Many runs (32 rows of 40 tokens, twice)


def experiment(lm, asked: Asked, invariant: bool, watch) -> lab.BatchingExperiment:
    """The Run button's measurement, on whichever device `lm` is (ui.gpu: plain data in and out)."""
    return lab.run_batching_experiment(
        lm,
        prompt=asked.prompt,
        batch_sizes=asked.sizes,
        condition=asked.condition,
        new_tokens=asked.new_tokens,
        invariant=invariant,
        on_progress=watch.on_progress,
        watch=watch,
    )


def tallied(lm, asked: Asked, prompts: list[str], watch):
    """The Many runs button's measurement: several prompts x batch sizes x both conditions."""
    return many_runs(
        lm,
        prompts=prompts,
        batch_sizes=asked.sizes,
        conditions=batchmates.CONDITIONS,
        new_tokens=asked.new_tokens,
        on_progress=watch.on_progress,
        watch=watch,
    )


def run_lab(config: AppConfig, invariant, progress, request, **controls) -> LabView | None:
    """Run button: the experiment, then every view of it (None when cancelled: the previous run stays shown)."""
    asked = checked(**controls)
    job = gpu.Job(
        experiment, (asked, bool(invariant)), replace(config, dtype=asked.dtype), CANCEL.file_for(request), GPU_SECONDS
    )
    try:
        exp = gpu.run(config, job, progress, "the temperature-0 experiment")
    except Cancelled:
        gr.Warning("Run cancelled: the charts still show the previous run.")
        return None
    return views(exp)


def many(config: AppConfig, progress, request, **controls) -> TallyView | None:
    """Many runs button: several prompts x batch sizes x both conditions, distinct completions counted (None when
    cancelled)."""
    asked = checked(**controls)
    others = [p for p in lab.DEFAULTS["many_prompts"] if p != asked.prompt]
    prompts = [asked.prompt, *others][: len(lab.DEFAULTS["many_prompts"])]
    job = gpu.Job(tallied, (asked, prompts), replace(config, dtype=asked.dtype), CANCEL.file_for(request), GPU_SECONDS)
    try:
        tally = gpu.run(config, job, progress, "the temperature-0 tally")
    except Cancelled:
        gr.Warning("Many runs cancelled.")
        return None
    groups = [(p["prompt"], p["completions"]) for p in tally.per_prompt]
    sources = [p["sources"] for p in tally.per_prompt]
    return TallyView(
        tally=tally_figure(groups, f"{config.model_id} · {asked.dtype}", sources=sources),
        tally_note=captions.tally_caption(tally, len(asked.sizes)),
    )


def empty_views() -> LabView:
    """What the run's outputs show before the first run."""
    return LabView(
        headline="*No run yet: press **Run** (under a minute on a CPU).*",
        texts=vis.texts_html(None, []),
        texts_note="",
        noise=vis.noise_figure(None, []),
        noise_note="",
        scatter=vis.scatter_figure([]),
        scatter_note="",
        causes=captions.causes_markdown(),
        fix="",
        fix_note="*Press **Run**: with batch-invariant mode ticked, each batch reruns with batch-1 shapes.*",
    )


def views(exp) -> LabView:
    """Every view of one experiment: headline, texts side by side, charts and the fix, each with its caption."""
    label = f"{exp.model} · {exp.device} · {exp.dtype} · {exp.condition}"
    return LabView(
        headline=captions.headline(exp),
        texts=vis.texts_html(exp.solo, exp.rows),
        texts_note=captions.texts_caption(exp),
        noise=vis.noise_figure(exp.solo, exp.rows, label),
        noise_note=captions.noise_caption(exp),
        scatter=vis.scatter_figure(exp.rows, label),
        scatter_note=captions.scatter_caption(exp),
        causes=captions.causes_markdown(exp),
        fix=vis.texts_html(exp.solo, exp.invariant_rows) if exp.invariant_rows else "",
        fix_note=captions.fix_caption(exp),
    )
