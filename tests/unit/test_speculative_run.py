"""Speculative decoding changes the speed, never the text: greedy speculative output equals plain greedy (our loop
and generate()) and transformers' own prompt lookup and early exit; rounds step, go back and stop as they should."""

import copy

import pytest
import torch

from decoding.loop import run_to_end
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.speculative.baseline import plain_decode
from decoding.speculative.records import EARLY_EXIT, PROMPT_LOOKUP, acceptance_by_position, summary
from decoding.speculative.run import SpecRun

GREEDY = SamplerSettings(temperature=0)
PROMPTS = ["Tell me a story.", "abcabcabcabc abc abc", "Copy this: the cat sat on the mat. the cat sat"]
MAX_NEW = 30


def chat(lm, text):
    return encode_prompt(lm.tokenizer, text, chat=True).ids


def generate(lm, ids, max_new, **kwargs):
    x = torch.tensor([ids], device=lm.device)  # (1, T)
    model = copy.copy(lm.model)  # generate() may move its own draft schedule in the shared generation config
    model.generation_config = copy.deepcopy(lm.model.generation_config)
    out = model.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=max_new, **kwargs)
    return out[0, len(ids) :].tolist()


def speculate(lm, ids, source, k, layer=None, settings=GREEDY, max_new=MAX_NEW, seed=0):
    return SpecRun(
        lm, ids, settings, source=source, draft_tokens=k, exit_layer=layer, seed=seed, max_new_tokens=max_new
    ).run_to_end()


@pytest.mark.parametrize("text", PROMPTS)
@pytest.mark.parametrize(
    ("source", "k", "layer"),
    [(PROMPT_LOOKUP, 1, None), (PROMPT_LOOKUP, 4, None), (EARLY_EXIT, 2, 1), (EARLY_EXIT, 5, 1)],
)
def test_greedy_speculative_equals_plain_greedy_and_generate(tiny, text, source, k, layer):
    ids = chat(tiny, text)
    plain = [
        s.token_id
        for s in run_to_end(tiny, encode_prompt(tiny.tokenizer, text, chat=True), GREEDY, max_new_tokens=MAX_NEW).steps
    ]
    assert speculate(tiny, ids, source, k, layer).token_ids == plain == generate(tiny, ids, MAX_NEW)
    assert plain_decode(tiny, ids, GREEDY, MAX_NEW).token_ids == plain


@pytest.mark.parametrize("text", PROMPTS)
def test_greedy_speculative_equals_transformers_prompt_lookup_and_early_exit(tiny, text):
    ids = chat(tiny, text)
    assert speculate(tiny, ids, PROMPT_LOOKUP, 3).token_ids == generate(tiny, ids, MAX_NEW, prompt_lookup_num_tokens=3)
    assert speculate(tiny, ids, EARLY_EXIT, 3, 1).token_ids == generate(tiny, ids, MAX_NEW, assistant_early_exit=1)


def test_greedy_with_a_repetition_penalty_still_equals_plain_decoding(tiny):
    # the penalty at each verified position sees the drafted tokens before it, as plain decoding would
    settings = SamplerSettings(temperature=0, repetition_penalty=1.5, frequency_penalty=0.5)
    ids = chat(tiny, PROMPTS[1])
    plain = plain_decode(tiny, ids, settings, MAX_NEW).token_ids
    assert speculate(tiny, ids, PROMPT_LOOKUP, 4, settings=settings).token_ids == plain
    assert speculate(tiny, ids, EARLY_EXIT, 4, 1, settings=settings).token_ids == plain


def test_a_round_emits_accepted_plus_one_and_the_cache_is_cropped_to_the_accepted_prefix(tiny):
    run = SpecRun(tiny, [5, 6, 7, 5, 6, 7, 5, 6], GREEDY, source=PROMPT_LOOKUP, draft_tokens=4, max_new_tokens=20)
    run.prefill()
    assert run.cache.get_seq_length() == 7
    r = run.round()
    assert r.drafted == [7, 5, 6, 7] and r.match.start == 0
    assert r.kept == r.accepted + 1 and len(run.ids) == 8 + r.kept
    assert r.cache_verified == 7 + len(r.drafted) + 1
    assert r.cache_cropped == run.cache.get_seq_length() == len(run.ids) - 1


def test_back_restores_the_state_before_a_round_and_replays_it_identically(tiny):
    settings = SamplerSettings(temperature=0.9, top_k=20)
    run = SpecRun(tiny, chat(tiny, PROMPTS[0]), settings, source=EARLY_EXIT, draft_tokens=3, exit_layer=1, seed=7)
    run.prefill()
    first = [run.round() for _ in range(3)]
    ids_after_two = list(run.ids[: first[2].context_len])
    run.back()
    assert run.ids == ids_after_two and len(run.rounds) == 2
    assert run.cache.get_seq_length() == len(run.ids) - 1
    again = run.round()
    assert (again.drafted, again.accepted, again.bonus_id) == (first[2].drafted, first[2].accepted, first[2].bonus_id)
    for _ in range(3):
        run.back()
    assert run.ids == run.result.prompt_ids and run.cache.get_seq_length() == len(run.ids) - 1
    with pytest.raises(ValueError, match="nothing to go back to"):
        run.back()


def test_a_seeded_sampling_run_repeats_and_the_seed_changes_it(tiny):
    settings = SamplerSettings(temperature=1.0)
    ids = chat(tiny, PROMPTS[0])
    a, b = (speculate(tiny, ids, EARLY_EXIT, 3, 1, settings, seed=3).token_ids for _ in range(2))
    assert a == b != speculate(tiny, ids, EARLY_EXIT, 3, 1, settings, seed=4).token_ids


def test_the_run_stops_at_max_new_tokens_exactly_and_never_drafts_past_it(tiny):
    res = speculate(tiny, [5, 6, 7] * 6, PROMPT_LOOKUP, 8, max_new=10)
    assert len(res.token_ids) == 10 and res.stop_reason == "max_new_tokens"
    assert all(r.context_len + len(r.drafted) + 1 <= 18 + 10 for r in res.rounds)


def test_summary_counts_tokens_per_target_pass_and_acceptance_by_position(tiny):
    res = speculate(tiny, [5, 6, 7] * 6, PROMPT_LOOKUP, 4, max_new=12)
    s = summary(res.rounds)
    assert s["tokens"] == len(res.token_ids) and s["target_passes"] == len(res.rounds)
    assert s["tokens_per_target_pass"] == pytest.approx(len(res.token_ids) / len(res.rounds))
    by_pos = acceptance_by_position(res.rounds, 4)
    assert sum(a for a, _ in by_pos) == s["accepted"]
    assert all(a <= n for a, n in by_pos) and by_pos[0][1] >= by_pos[-1][1]


@pytest.mark.parametrize(
    ("k", "layer", "message"),
    [
        (0, None, r"draft tokens K must be a whole number in \[1, 16\], got 0"),
        (-2, None, r"in \[1, 16\], got -2"),
        (17, None, r"in \[1, 16\], got 17"),
        (3, 0, r"exit layer L must be a whole number in \[1, 1\]"),
        (3, 5, r"exit layer L must be a whole number in \[1, 1\]"),
    ],
)
def test_bad_k_or_l_is_refused_with_the_range(tiny, k, layer, message):
    source = EARLY_EXIT if layer is not None else PROMPT_LOOKUP
    with pytest.raises(ValueError, match=message):
        SpecRun(tiny, [1, 2, 3], GREEDY, source=source, draft_tokens=k, exit_layer=layer)


COPY = "Fix the spelling and return the whole sentence: The quick brown fox jumps over the lazzy dog near the rivr."


@pytest.mark.parametrize(("source", "k", "layer"), [(PROMPT_LOOKUP, 5, None), (EARLY_EXIT, 3, 4)])
def test_bundled_model_greedy_speculative_equals_plain_and_transformers(bundled, source, k, layer):
    ids = chat(bundled, COPY)
    # generate()'s early exit drafts up to 20 tokens a round with a draft that rarely guesses right: kept short
    ours = speculate(bundled, ids, source, k, layer, max_new=16)
    kwargs = {"prompt_lookup_num_tokens": k} if source == PROMPT_LOOKUP else {"assistant_early_exit": layer}
    plain = plain_decode(bundled, ids, GREEDY, 16).token_ids
    assert ours.token_ids == plain == generate(bundled, ids, 16) == generate(bundled, ids, 16, **kwargs)
    if source == PROMPT_LOOKUP:  # the answer copies the prompt: most rounds keep several guesses
        assert summary(ours.rounds)["tokens_per_target_pass"] > 1.5
