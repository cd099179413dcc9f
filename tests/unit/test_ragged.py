"""A packed pass gives every session the logits it would get alone (within float noise), writes each session's
own cache exactly as a solo step does, and leaves the solo path bit for bit as it was."""

import copy

import pytest
import torch

from decoding.forward import forward_one
from decoding.loop import Run
from decoding.passes import Pass
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.serving import ragged

PROMPTS = ([5, 9, 2, 7], [11, 3], [8, 8, 1, 4, 6, 2, 9, 10, 12], [3])
TOLERANCE = 1e-4  # float32: packed and solo sums are ordered differently, by ~1e-6 here


def prefilled(lm, prompts=PROMPTS):
    out = []
    for ids in prompts:
        logits, cache = forward_one(lm, ids, None, 0)
        out.append((list(ids), cache, int(logits.argmax())))
    return out


def test_installing_the_dispatcher_leaves_solo_passes_bit_identical(tiny):
    before = forward_one(tiny, list(PROMPTS[2]), None, 0)[0]
    ragged.install(tiny)
    ragged.install(tiny)  # idempotent
    assert tiny.model.config._attn_implementation == ragged.NAME
    assert torch.equal(forward_one(tiny, list(PROMPTS[2]), None, 0)[0], before)


def test_packed_decode_rows_match_each_session_alone(tiny):
    ragged.install(tiny)
    sessions = prefilled(tiny)
    solo = [forward_one(tiny, [tok], copy.deepcopy(cache), len(ids))[0] for ids, cache, tok in sessions]
    segments = [ragged.Segment(cache, [tok], len(ids)) for ids, cache, tok in sessions]
    packed = ragged.packed_forward(tiny, segments)  # (S, V)
    assert packed.shape == (len(PROMPTS), tiny.vocab_size)
    for row, alone in zip(packed, solo):
        assert (row - alone).abs().max() < TOLERANCE
    # each session's own cache grew by exactly its one token
    assert [c.get_seq_length() for _, c, _ in sessions] == [len(p) + 1 for p in PROMPTS]


def test_a_prefill_chunk_rides_with_decode_rows_and_stays_causal(tiny):
    ragged.install(tiny)
    prompt = [4, 7, 1, 9, 3, 3, 8, 2, 6, 5, 10, 11]
    whole = forward_one(tiny, prompt, None, 0)[0]
    sessions = prefilled(tiny, PROMPTS[:2])
    cache = ragged.new_cache(tiny)
    for start in range(0, len(prompt), 5):  # chunks of 5, 5, 2 beside two decode rows each time
        chunk = prompt[start : start + 5]
        rows = [ragged.Segment(cache, chunk, start)]
        rows += [ragged.Segment(copy.deepcopy(c), [tok], len(ids)) for ids, c, tok in sessions]
        logits = ragged.packed_forward(tiny, rows)
    assert cache.get_seq_length() == len(prompt)
    assert (logits[0] - whole).abs().max() < TOLERANCE


def test_a_session_cache_written_by_packed_passes_serves_a_later_solo_step(tiny):
    ragged.install(tiny)
    (ids, cache, tok), *_ = prefilled(tiny)
    reference = copy.deepcopy(cache)
    ragged.packed_forward(
        tiny, [ragged.Segment(cache, [tok], len(ids)), ragged.Segment(ragged.new_cache(tiny), [1, 2], 0)]
    )
    forward_one(tiny, [tok], reference, len(ids))
    for mine, theirs in zip(cache.layers, reference.layers):
        assert torch.allclose(mine.keys, theirs.keys, atol=TOLERANCE)
        assert torch.allclose(mine.values, theirs.values, atol=TOLERANCE)


def _runs(lm, texts=("hello there", "a b c d e", "x")):
    runs = [Run(lm, encode_prompt(lm.tokenizer, t, False), seed=0, max_new_tokens=8, top_n=1) for t in texts]
    for run in runs:
        run.prefill()
    return runs


def test_runs_fed_together_get_their_own_pass_s_logits_within_float_noise_and_their_caches_grow_by_one(tiny):
    greedy = SamplerSettings(temperature=0)
    together, alone = _runs(tiny), _runs(tiny)
    for run in together:
        run.step(greedy, feed=False)
    assert all(run.hungry for run in together)
    ragged.feed_together(tiny, together)
    for run in alone:
        run.step(greedy)  # its own pass
    for a, b in zip(together, alone):
        assert a.generated == b.generated and not a.hungry
        assert (a.logits - b.logits).abs().max() < TOLERANCE
        assert a.last_pass.mode == "packed" and a.last_pass.rows == len(together)
        assert a.cache.get_seq_length() == len(a.ids) == b.cache.get_seq_length()


def test_a_lone_run_fed_together_gets_a_pass_of_its_own_bit_for_bit(tiny):
    greedy = SamplerSettings(temperature=0)
    (together,), (alone,) = _runs(tiny, ("hello there",)), _runs(tiny, ("hello there",))
    together.step(greedy, feed=False)
    ragged.feed_together(tiny, [together])
    alone.step(greedy)
    assert torch.equal(together.logits, alone.logits) and together.last_pass.mode == "solo"


def test_feeding_a_run_that_waits_for_no_pass_is_refused(tiny):
    (run,) = _runs(tiny, ("hello there",))
    with pytest.raises(ValueError, match="no unfed tokens"):
        run.fed(run.logits, Pass(0.0))
