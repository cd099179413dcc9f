"""A step happens whole or not at all: when the pass that feeds its token raises (a pass of its own, or a scheduler's
tick handing the error to the session), the run is exactly as it was before the step (its ids, unfed tokens, trace
and text, generator, rules, cache and pending logits), and the next step writes what generate() writes."""

from contextlib import contextmanager

import pytest
import torch

from decoding.loop import Run, drive
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.serving.scheduler import Scheduler
from tests.helpers.fidelity import GREEDY, generate_ids

NEW = 6
CASES = [(GREEDY, 0), (SamplerSettings(temperature=1.2, top_k=40), 3)]


@pytest.fixture(scope="module")
def prompt(tiny):
    return encode_prompt(tiny.tokenizer, "The capital of France is", chat=False)


@contextmanager
def next_pass_fails(lm, layer: int = 1):
    """The model's next pass raises inside decoder layer `layer`, after the layers before it have written their keys
    and values into the cache (a hook: the scripted pass, which would skip the layer's modules, is not taken)."""
    failed = []

    def fail_once(module, args, kwargs):
        if not failed:
            failed.append(1)
            raise RuntimeError("injected: the pass failed part way")

    handle = lm.model.model.layers[layer].register_forward_pre_hook(fail_once, with_kwargs=True)
    try:
        yield failed
    finally:
        handle.remove()


def _state(run: Run) -> dict:
    cache = run.cache
    return {
        "ids": list(run.ids),
        "unfed": list(run.unfed),
        "steps": [(s.index, s.token_id) for s in run.trace.steps],
        "text": (run.trace.text, run.trace.held_text, run.trace.stop_reason),
        "checkpoints": len(run.checkpoints),
        "generator": run.generator.get_state(),
        "logits": run.logits.clone(),
        "last_pass": run.last_pass,
        "cache": [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers],
    }


def _assert_same(now: dict, before: dict) -> None:
    for key, value in before.items():
        if key == "cache":
            assert len(now[key]) == len(value)
            for (k, v), (k0, v0) in zip(now[key], value):
                assert k.shape == k0.shape and torch.equal(k, k0) and torch.equal(v, v0), "the cache moved"
        elif isinstance(value, torch.Tensor):
            assert torch.equal(now[key], value), f"{key} changed"
        else:
            assert now[key] == value, f"{key} changed"


@pytest.mark.parametrize("through", ["alone", "scheduler"])
@pytest.mark.parametrize(("settings", "seed"), CASES, ids=["greedy", "sampled"])
def test_a_step_whose_pass_fails_leaves_the_run_as_it_was_and_the_next_step_writes_what_generate_writes(
    tiny, prompt, through, settings, seed
):
    scheduler = Scheduler(tiny, chunk_tokens=4) if through == "scheduler" else None
    run = Run(tiny, prompt, seed=seed, max_new_tokens=NEW, scheduler=scheduler)
    run.prefill()
    run.step(settings)
    before = _state(run)
    with next_pass_fails(tiny) as failed, pytest.raises(RuntimeError, match="injected"):
        run.step(settings)
    assert failed, "the injected failure never ran"
    _assert_same(_state(run), before)
    for _ in drive(run, settings):
        pass
    assert run.trace.token_ids == generate_ids(tiny, prompt, settings, seed, NEW)
    assert [s.index for s in run.trace.steps] == list(range(NEW))


def test_a_failed_step_then_back_goes_back_over_the_step_before_it(tiny, prompt):
    run = Run(tiny, prompt, seed=0, max_new_tokens=NEW)
    run.prefill()
    first = _state(run)
    run.step(GREEDY)
    with next_pass_fails(tiny), pytest.raises(RuntimeError):
        run.step(GREEDY)
    run.back()  # the checkpoint of the failed step is gone with it: Back undoes the step that happened
    assert run.ids == first["ids"] and run.trace.steps == []
    assert torch.equal(run.logits, first["logits"])


@pytest.mark.bundled
def test_the_bundled_model_writes_what_a_clean_run_writes_after_a_failed_pass(bundled):
    """Issue 59's run: greedy, "The capital of France is" writes ␣Paris, ".", "\\n"; with the second step's pass made to
    raise, the next Step wrote "." again, a token the model never chose there."""
    prompt = encode_prompt(bundled.tokenizer, "The capital of France is", chat=False)
    clean = Run(bundled, prompt, max_new_tokens=3)
    clean.prefill()
    for _ in drive(clean, GREEDY):
        pass
    run = Run(bundled, prompt, max_new_tokens=3)
    run.prefill()
    run.step(GREEDY)
    with next_pass_fails(bundled), pytest.raises(RuntimeError, match="injected"):
        run.step(GREEDY)
    for _ in drive(run, GREEDY):
        pass
    assert run.trace.token_ids == clean.trace.token_ids
    assert clean.trace.text.startswith(" Paris")
