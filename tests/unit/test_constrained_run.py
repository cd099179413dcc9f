"""Constrained runs on the tiny random model (its byte-level tokenizer goes through llguidance too): every token
legal, the grammar's mask equal to llguidance's own bitmask, Back, forcing, fast-forward, and malformed grammars."""

import re

import numpy as np
import pytest
import torch
from llguidance.numpy import allocate_token_bitmask, apply_token_bitmask_inplace, fill_next_token_bitmask

from decoding.beams.scoring import score_sequence
from decoding.constrained.kinds import Constraint
from decoding.constrained.measure import compare
from decoding.constrained.run import ConstrainedRun, calls_saved, run_constrained
from decoding.loop import run_to_end
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt

DATE = Constraint("regex", r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])")
PERSON = Constraint(
    "json_schema",
    '{"type": "object", "properties": {"name": {"type": "string", "maxLength": 6}, '
    '"age": {"type": "integer", "minimum": 0, "maximum": 99}}, "required": ["name", "age"], '
    '"additionalProperties": false}',
)
SAMPLED = SamplerSettings(temperature=1.0)
GREEDY = SamplerSettings(temperature=0)


@pytest.fixture(scope="module")
def prompt(tiny):
    return encode_prompt(tiny.tokenizer, "When?", chat=True)


def _llguidance_keep(run: ConstrainedRun) -> torch.Tensor:
    """llguidance's own bitmask for the run's matcher state, unpacked by llguidance's own numpy kernel."""
    bits = allocate_token_bitmask(1, run.lm.vocab_size)
    fill_next_token_bitmask(run.grammar.matcher, bits)
    logits = np.zeros((1, run.lm.vocab_size), dtype=np.float32)
    apply_token_bitmask_inplace(logits, bits)
    return torch.from_numpy(np.isfinite(logits[0]))


@pytest.mark.parametrize("settings", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
@pytest.mark.parametrize("constraint", [DATE, PERSON], ids=["regex", "json"])
def test_every_token_is_legal_and_the_answer_validates(tiny, prompt, constraint, settings):
    for seed in range(3):
        trace = run_constrained(tiny, prompt, constraint, settings, seed=seed, max_new_tokens=40)
        assert trace.stop_reason == "eos"
        if constraint is DATE:
            assert re.fullmatch(constraint.text, trace.text)
        else:
            assert set(__import__("json").loads(trace.text)) == {"name", "age"}


def test_grammar_mask_equals_llguidance_bitmask_at_every_step(tiny, prompt):
    run = ConstrainedRun(tiny, prompt, PERSON, seed=3, max_new_tokens=40, fast_forward=False)
    run.prefill()
    while not run.done:
        keep, _ = run.grammar.keep_mask()
        assert torch.equal(keep, _llguidance_keep(run))
        step = run.step(SAMPLED)
        assert step.allowed == int(keep.sum()) and step.candidate(step.token_id).removed_by is None


def test_after_back_and_another_token_the_mask_is_the_new_states(tiny, prompt):
    run = ConstrainedRun(tiny, prompt, DATE, seed=0, max_new_tokens=20, fast_forward=False)
    run.prefill()
    first = run.step(GREEDY).token_id
    run.grammar.keep_mask()  # the mask after the first digit, computed and kept
    run.back()
    other = next(i for i in tiny.tokenizer("12", add_special_tokens=False).input_ids if i != first)
    run.step(GREEDY, force_id=other)
    assert torch.equal(run.grammar.keep_mask()[0], _llguidance_keep(run))


def test_a_step_records_the_grammar_stage_and_the_mass_on_illegal_tokens(tiny, prompt):
    run = ConstrainedRun(tiny, prompt, DATE, seed=0, max_new_tokens=20)
    run.prefill()
    keep, _ = run.grammar.keep_mask()
    probs = torch.softmax(run.logits, dim=-1)
    step = run.step(SAMPLED)
    assert ("grammar", 2) in step.stages  # the first character of a year: 1 or 2
    assert step.illegal_mass == pytest.approx(float(probs[~keep].sum()), abs=1e-6)
    removed = [c for c in step.top if c.removed_by == "grammar"]
    assert removed and all(not keep[c.id] and c.prob_after == 0 for c in removed)


def test_back_then_step_gives_the_same_tokens_as_a_fresh_run(tiny, prompt):
    fresh = run_constrained(tiny, prompt, PERSON, SAMPLED, seed=5, max_new_tokens=40).token_ids
    run = ConstrainedRun(tiny, prompt, PERSON, seed=5, max_new_tokens=40)
    run.prefill()
    for back in (1, 3, 2, 7, 1):
        for _ in range(4):
            if not run.done:
                run.step(SAMPLED)
        for _ in range(min(back, len(run.trace.steps))):
            run.back()
        assert run.grammar.consumed == len(run.trace.steps)
    while not run.done:
        run.step(SAMPLED)
    assert run.trace.token_ids == fresh


def test_back_from_the_end_token_then_step_ends_the_same_way(tiny, prompt):
    fresh = run_constrained(tiny, prompt, PERSON, SAMPLED, seed=6, max_new_tokens=40)
    run = ConstrainedRun(tiny, prompt, PERSON, seed=6, max_new_tokens=40)
    run.prefill()
    while not run.done:
        run.step(SAMPLED)
    for _ in range(4):
        run.back()
    while not run.done:
        run.step(SAMPLED)
    assert run.trace.token_ids == fresh.token_ids and run.trace.text == fresh.text


def test_back_to_the_start_rolls_the_matcher_back_to_its_first_state(tiny, prompt):
    run = ConstrainedRun(tiny, prompt, DATE, seed=1, max_new_tokens=20)
    run.prefill()
    first, _ = run.grammar.keep_mask()
    first = first.clone()
    run.step(SAMPLED), run.step(SAMPLED)
    run.back(), run.back()
    assert run.grammar.consumed == 0 and torch.equal(run.grammar.keep_mask()[0], first)


def test_forcing_an_illegal_token_is_refused_naming_the_legal_ones(tiny, prompt):
    run = ConstrainedRun(tiny, prompt, DATE, seed=0, max_new_tokens=20)
    run.prefill()
    illegal = tiny.tokenizer("x", add_special_tokens=False).input_ids[0]
    with pytest.raises(ValueError, match=r"token 'x' .* not legal .* allows 2 tokens: '1' \(\d+\), '2' \(\d+\)"):
        run.step(GREEDY, force_id=illegal)
    assert run.trace.steps == [] and run.grammar.consumed == 0  # nothing changed: the session goes on
    two = tiny.tokenizer("2", add_special_tokens=False).input_ids[0]
    assert run.step(GREEDY, force_id=two).token_id == two


def test_fast_forward_appends_forced_tokens_without_sampling_or_passes_of_their_own(tiny, prompt):
    run = ConstrainedRun(tiny, prompt, PERSON, seed=2, max_new_tokens=40)
    passes = []
    one_way = run._pass  # every pass of a run goes through it
    run._pass = lambda ids, past, forward=None, stop=None, told=None: (
        passes.append(len(ids)),
        one_way(ids, past, forward),
    )[1]
    run.prefill()
    while not run.done:
        run.step(SAMPLED)
    steps = run.trace.steps
    forced = [s for s in steps if s.grammar_forced]
    assert forced and all(s.phase == "grammar" and s.allowed == 1 for s in forced)
    assert "".join(s.token_text for s in steps[:9]) == '{"name": '  # keys and punctuation: the grammar's
    # one pass for the prompt, then one per token except those that rode along (and none after the last)
    assert len(passes) - 1 == len(steps) - 1 - calls_saved(run.trace)
    assert sum(passes[1:]) == len(steps) - len(run.unfed)


def test_without_fast_forward_every_token_is_sampled(tiny, prompt):
    trace = run_constrained(tiny, prompt, PERSON, SAMPLED, seed=2, max_new_tokens=40, fast_forward=False)
    assert not any(s.grammar_forced for s in trace.steps) and calls_saved(trace) == 0
    assert __import__("json").loads(trace.text).keys() == {"name", "age"}


def test_a_grammar_run_never_changes_the_unconstrained_run(tiny, prompt):
    before = run_to_end(tiny, prompt, SAMPLED, seed=4, max_new_tokens=12)
    run_constrained(tiny, prompt, DATE, SAMPLED, seed=4, max_new_tokens=12)
    after = run_to_end(tiny, prompt, SAMPLED, seed=4, max_new_tokens=12)
    assert before.token_ids == after.token_ids and all(s.allowed is None for s in after.steps)


@pytest.mark.parametrize(
    ("kind", "text", "said"),
    [
        ("regex", "[a-", "unclosed character class"),
        ("regex", "(ab", "unclosed group"),
        ("json_schema", '{"type": "objekt"}', "Invalid type: objekt"),
        ("json_schema", "{bad", "not valid JSON: Expecting property name .* line 1, column 2"),
        ("json_schema", "[1, 2]", "must be a JSON object"),
        ("lark", "start: foo", 'unknown name: "foo"'),
        ("choices", "  ", "is empty"),
    ],
)
def test_a_malformed_constraint_is_named_and_the_session_goes_on(tiny, prompt, kind, text, said):
    with pytest.raises(ValueError, match=said):
        ConstrainedRun(tiny, prompt, Constraint(kind, text), max_new_tokens=8)
    assert run_constrained(tiny, prompt, DATE, GREEDY, max_new_tokens=20).stop_reason == "eos"


def test_the_measurement_samples_what_runs_of_their_own_write_and_scores_them_as_one_pass_does(tiny, prompt):
    # its samples start from one shared prefill and are scored against the prompt's cache: the same answers as runs
    # that prefill on their own, and the log-probabilities of one pass over prompt + answer, rounding apart
    result = compare(tiny, prompt, DATE, SAMPLED, n=3, seed=5, max_new_tokens=12)
    for constrained, samples in ((False, result.unconstrained), (True, result.constrained)):
        for sample, seed in zip(samples, (5, 6, 7), strict=True):
            kwargs = dict(seed=seed, max_new_tokens=12)
            if constrained:
                own = run_constrained(tiny, prompt, DATE, SAMPLED, **kwargs)
            else:
                own = run_to_end(tiny, prompt, SAMPLED, **kwargs)
            assert (sample.seed, sample.text, sample.tokens) == (seed, own.text, len(own.token_ids))
            whole = score_sequence(tiny, prompt.ids, own.token_ids)
            assert sample.logprob == pytest.approx(whole.logprob, abs=1e-4)
    assert all(s.valid for s in result.constrained)
