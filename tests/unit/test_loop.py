"""The loop generates exactly what model.generate() does, steps back exactly, and records plain data."""

import copy
import dataclasses

import pytest
import torch

from decoding.loop import Run, drive, generate_steps, prefill_once, run_to_end
from decoding.passes import Pass
from decoding.pipeline import SamplerSettings, process
from decoding.prompts import encode_prompt
from decoding.trace import Step
from tests.helpers.fidelity import FIDELITY, GREEDY, generate_ids


@pytest.fixture(scope="module")
def prompt(tiny):
    return encode_prompt(tiny.tokenizer, "Tell me a story.", chat=True)


def _run(tiny, prompt, **kwargs) -> Run:
    run = Run(tiny, prompt, **kwargs)
    run.prefill()
    return run


@pytest.mark.parametrize(("settings", "seed"), FIDELITY, ids=lambda v: str(v) if isinstance(v, int) else None)
def test_generated_ids_equal_model_generate(tiny, prompt, settings, seed):
    trace = run_to_end(tiny, prompt, settings, seed=seed, max_new_tokens=24)
    assert trace.token_ids == generate_ids(tiny, prompt, settings, seed, 24)


def test_sampling_differs_from_greedy_on_the_tiny_model(tiny, prompt):
    # otherwise the sampled fidelity tests above would prove nothing beyond greedy
    greedy = run_to_end(tiny, prompt, GREEDY, max_new_tokens=24).token_ids
    assert run_to_end(tiny, prompt, SamplerSettings(), seed=1, max_new_tokens=24).token_ids != greedy


def test_same_seed_gives_the_same_run_and_another_seed_another(tiny, prompt):
    s = SamplerSettings(temperature=1.5)
    first = run_to_end(tiny, prompt, s, seed=11, max_new_tokens=16).token_ids
    assert run_to_end(tiny, prompt, s, seed=11, max_new_tokens=16).token_ids == first
    assert run_to_end(tiny, prompt, s, seed=12, max_new_tokens=16).token_ids != first


def test_generate_steps_yields_one_step_per_token_and_returns_the_trace(tiny, prompt):
    steps = generate_steps(tiny, prompt, GREEDY, max_new_tokens=5)
    collected = []
    with pytest.raises(StopIteration) as stop:
        while True:
            collected.append(next(steps))
    assert [s.index for s in collected] == [0, 1, 2, 3, 4]
    assert stop.value.value.steps == collected


def test_drive_steps_until_the_run_stops_or_the_limit(tiny, prompt):
    run = _run(tiny, prompt, max_new_tokens=6)
    assert [s.index for s in drive(run, GREEDY, limit=2)] == [0, 1] and not run.done
    assert [s.index for s in drive(run, GREEDY)] == [2, 3, 4, 5] and run.done
    assert list(drive(run, GREEDY)) == []


def test_drive_yields_what_advance_returns(tiny, prompt):
    run = _run(tiny, prompt, max_new_tokens=3)
    assert list(drive(run, advance=lambda: run.step(GREEDY).token_id)) == run.trace.token_ids
    assert len(run.trace.token_ids) == 3


class _OnlyEven(Run):
    """A run with a rule of its own, through the hooks: only even token ids are legal."""

    def legal_mask(self):
        return torch.arange(self.lm.vocab_size, device=self.lm.device) % 2 == 0  # (V,)


def test_a_legal_mask_hook_is_one_more_filter_the_loop_applies(tiny, prompt):
    run = _OnlyEven(tiny, prompt, seed=3, max_new_tokens=8)
    run.prefill()
    steps = list(drive(run, SamplerSettings(temperature=1.5)))
    assert steps and all(s.token_id % 2 == 0 for s in steps)
    assert all(c.prob_after == 0 for s in steps for c in s.top if c.id % 2)


def test_back_then_step_reproduces_the_same_token_and_trims_the_cache(tiny, prompt):
    run = _run(tiny, prompt, seed=5)
    s = SamplerSettings(temperature=1.2)
    for _ in range(4):
        run.step(s)
    last = run.step(s)
    length = run.cache.get_seq_length()
    assert length == len(run.ids)  # every chosen token has been fed back
    run.back()
    assert run.cache.get_seq_length() == length - 1 and len(run.trace.steps) == 4
    again = run.step(s)
    assert again.token_id == last.token_id and again.top == last.top
    assert run.cache.get_seq_length() == length


def test_back_to_the_start_prefills_again(tiny, prompt):
    run = _run(tiny, prompt, seed=2)
    first = run.step(SamplerSettings())
    run.back()
    assert run.trace.steps == [] and run.ids == prompt.ids and run.cache.get_seq_length() == len(prompt.ids)
    again = run.step(SamplerSettings())
    assert again.token_id == first.token_id and again.phase == "prefill"


def test_back_after_a_stop_resumes_and_stops_again(tiny, prompt):
    run = _run(tiny, prompt, max_new_tokens=3)
    steps = [run.step(GREEDY) for _ in range(3)]
    assert run.done and run.trace.stop_reason == "max_new_tokens"
    run.back()
    assert not run.done and run.cache.get_seq_length() == len(run.ids)
    assert run.step(GREEDY).token_id == steps[-1].token_id and run.done


def test_runs_from_one_shared_prefill_write_what_each_writes_from_its_own_and_leave_it_unchanged(tiny, prompt):
    shared = prefill_once(tiny, prompt.ids)
    before = [layer.keys.clone() for layer in shared.cache.layers]
    settings = SamplerSettings(temperature=1.0)
    for seed in (0, 1, 2):
        own = run_to_end(tiny, prompt, settings, seed=seed, max_new_tokens=12)
        run = Run(tiny, prompt, seed=seed, max_new_tokens=12)
        run.prefill(shared)
        assert torch.equal(run.logits, shared.logits) and run.logits is not shared.logits
        assert run.last_pass.mode == "cached" and run.trace.prefill_ms == shared.passed.ms
        for _ in drive(run, settings):
            pass
        assert run.trace.token_ids == own.token_ids
    # each run grew a copy: the shared cache still holds the prompt alone, as it was
    assert shared.cache.get_seq_length() == len(prompt.ids)
    assert all(torch.equal(layer.keys, kept) for layer, kept in zip(shared.cache.layers, before))


def test_a_shared_prefill_of_another_prompt_is_refused(tiny, prompt):
    other = encode_prompt(tiny.tokenizer, "Another prompt.", chat=True)
    with pytest.raises(ValueError, match="a shared prefill is of this prompt"):
        Run(tiny, prompt).prefill(prefill_once(tiny, other.ids))


def test_back_with_nothing_generated_is_an_error(tiny, prompt):
    with pytest.raises(ValueError, match="nothing to go back to"):
        _run(tiny, prompt).back()


def test_forced_steps_are_marked_and_include_the_forced_token(tiny, prompt):
    run = _run(tiny, prompt, top_n=3)
    free = run.step(GREEDY)
    low = run.preview(GREEDY).raw.argsort()[0].item()  # the least likely token
    forced = run.step(SamplerSettings(top_k=1), force_id=low)
    assert not free.forced and forced.forced and forced.token_id == low
    assert len(forced.top) == 4 and forced.top[-1].id == low  # top-3 plus the forced token
    assert forced.rank == tiny.vocab_size
    assert forced.prob_after == 0.0 and forced.candidate(low).removed_by == "top_k"
    assert run.generated == [free.token_id, low]


def test_a_forced_id_outside_the_vocabulary_is_rejected(tiny, prompt):
    with pytest.raises(ValueError, match=r"forced token id must be in \[0, 259\)"):
        _run(tiny, prompt).step(GREEDY, force_id=259)


def test_stepping_a_stopped_run_is_an_error(tiny, prompt):
    run = _run(tiny, prompt, max_new_tokens=1)
    run.step(GREEDY)
    with pytest.raises(ValueError, match="the run has stopped"):
        run.step(GREEDY)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_new_tokens": 0}, "max_new_tokens must be"),
        ({"top_n": 0}, "top_n must be"),
        ({"max_new_tokens": 600}, "context window"),
    ],
)
def test_bad_run_arguments_are_rejected(tiny, prompt, kwargs, message):
    with pytest.raises(ValueError, match=message):
        Run(tiny, prompt, **kwargs)


def test_step_records_what_the_pipeline_did(tiny, prompt):
    run = _run(tiny, prompt, seed=0, top_n=20)
    steps = [run.step(SamplerSettings(temperature=0.9, top_k=5, top_p=0.9)) for _ in range(3)]
    for i, step in enumerate(steps):
        assert step.index == i and step.phase == ("prefill" if i == 0 else "decode")
        assert step.context_len == len(prompt.ids) + i
        assert [name for name, _ in step.stages] == ["temperature", "top_k", "top_p"]
        kept = step.stages[-1][1]
        assert sum(c.prob_after for c in step.top) == pytest.approx(1.0, abs=1e-5)
        assert sum(c.removed_by is None for c in step.top) == kept
        assert 0 < step.kept_mass <= 1 and step.forward_ms > 0 and step.sample_ms >= 0
        assert step.candidate(step.token_id).prob_after == step.prob_after > 0
        assert [c.prob_before for c in step.top] == sorted((c.prob_before for c in step.top), reverse=True)
    # each decode step adds one position to every layer's keys and values
    per_token = steps[2].kv_bytes - steps[1].kv_bytes
    assert per_token == 2 * 2 * 2 * 16 * 4  # (K and V) x layers x kv heads x head_dim x float32 bytes
    assert steps[0].kv_bytes == len(prompt.ids) * per_token


def _tensors_in(value, path="step") -> list[str]:
    """Every place inside a record that is not plain data."""
    if dataclasses.is_dataclass(value):
        return [p for f in dataclasses.fields(value) for p in _tensors_in(getattr(value, f.name), f"{path}.{f.name}")]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _tensors_in(v, f"{path}[{k!r}]")]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in _tensors_in(v, f"{path}[{i}]")]
    return [] if value is None or type(value) in (int, float, str, bool) else [f"{path}: {type(value).__name__}"]


def test_step_records_are_plain_data_and_deep_copy(tiny, prompt):
    run = _run(tiny, prompt)
    steps = [run.step(SamplerSettings(repetition_penalty=1.2, top_k=8)) for _ in range(2)]
    steps.append(run.step(GREEDY, force_id=65))
    for step in steps:
        assert isinstance(step, Step) and _tensors_in(step) == []
        assert copy.deepcopy(step) == step
    assert _tensors_in(run.trace) == []


def test_stop_reason_max_new_tokens(tiny, prompt):
    trace = run_to_end(tiny, prompt, GREEDY, max_new_tokens=4)
    assert trace.stop_reason == "max_new_tokens" and len(trace.token_ids) == 4


def test_stop_reason_eos_keeps_the_eos_id_like_generate(tiny, prompt):
    run = _run(tiny, prompt)
    (b,) = tiny.tokenizer.encode("b", add_special_tokens=False)
    run.step(GREEDY, force_id=b)
    run.step(GREEDY, force_id=tiny.eos_ids[0])
    assert run.trace.stop_reason == "eos" and run.trace.token_ids == [b, tiny.eos_ids[0]]
    assert run.trace.text == "b"  # the end-of-turn token is not part of the text


def test_stop_reason_stop_sequence(tiny, prompt):
    run = _run(tiny, prompt, stop_strings=["ab"])
    for token_id in tiny.tokenizer.encode("xab", add_special_tokens=False):
        run.step(GREEDY, force_id=token_id)
    assert run.trace.stop_reason == "stop_sequence" and run.trace.text == "x"


@pytest.mark.bundled
@pytest.mark.parametrize(("settings", "seed"), [(GREEDY, 0), (SamplerSettings(temperature=0.7, top_p=0.9), 1)])
def test_bundled_model_matches_generate_and_knows_paris(bundled, settings, seed):
    prompt = encode_prompt(bundled.tokenizer, "What is the capital of France?", chat=True)
    trace = run_to_end(bundled, prompt, settings, seed=seed, max_new_tokens=24)
    assert trace.token_ids == generate_ids(bundled, prompt, settings, seed, 24)
    if settings is GREEDY or bundled.device.type == "cpu":  # a sampled text follows the device's random stream
        assert "Paris" in trace.text


def test_a_processed_distribution_is_shared_only_by_runs_with_equal_logits_settings_and_context(tiny, prompt):
    settings = SamplerSettings(temperature=0.8, top_p=0.7, repetition_penalty=1.3)
    first, second = _run(tiny, prompt), _run(tiny, prompt)  # two sessions, one prompt: equal logits
    assert torch.equal(first.logits, second.logits)
    assert second.preview(settings) is first.preview(settings)  # identical inputs: the one result, exactly
    other = SamplerSettings(temperature=0.8, top_p=0.8, repetition_penalty=1.3)
    assert second.preview(other) is not first.preview(settings)
    # equal logits in another context: the penalty moves that context's tokens, so the distribution is its own
    third = _run(tiny, encode_prompt(tiny.tokenizer, "A poem, please.", chat=True))
    third.logits = first.logits.clone()
    fresh = process(third.logits, settings, third.ids, third.generated)
    mine = third.preview(settings)
    assert mine is not first.preview(settings) and torch.equal(mine.final, fresh.final)
    # a grammar is the run's own state: its distribution is never shared
    keep_all = torch.ones(tiny.vocab_size, dtype=torch.bool)
    ruled = [_run(tiny, prompt) for _ in range(2)]
    for run in ruled:
        run.legal_mask = lambda: keep_all
    assert ruled[0].preview(settings) is not ruled[1].preview(settings)


def test_a_preview_record_is_shared_with_each_run_s_own_timings(tiny, prompt):
    settings = SamplerSettings(temperature=0.8, top_p=0.7)
    first, second = _run(tiny, prompt), _run(tiny, prompt)
    second.last_pass = Pass(123.0, rows=7, mode="cached", noise=0.5)  # its own pass, unlike the first's
    mine, theirs = second.preview_step(settings), first.preview_step(settings)
    assert (mine.forward_ms, mine.rows, mine.pass_mode, mine.noise) == (123.0, 7, "cached", 0.5)
    assert theirs.forward_ms != 123.0 and theirs.rows != 7
    assert mine == second.record(second.preview(settings), mine.token_id, False, settings, 0.0)  # as recorded afresh
    assert mine.top is not theirs.top and mine.settings is not theirs.settings  # a copy of its own
    other = SamplerSettings(temperature=0.8, top_p=0.8)  # other settings: a record of their own
    p = second.preview(other)
    assert second.preview_step(other) == second.record(p, int(torch.argmax(p.final)), False, other, 0.0)


def test_a_preview_reads_the_pending_logits_once_so_a_refeed_cannot_split_it(tiny, prompt):
    run = _run(tiny, prompt)
    first = run.logits
    reads = iter([first] + [first + 1.0] * 5)  # a refeed in another thread installs new logits after the first read

    class Refed(Run):
        logits = property(lambda self: next(reads), lambda self, value: None)

    run.__class__ = Refed
    settings = SamplerSettings(temperature=0.6, top_k=7)
    processed = run.preview(settings)
    assert torch.equal(processed.raw, first) and run._processed.logits is first
