"""Sessions stepped together through the scheduler get what each gets alone; alone mode is the solo path bit for
bit; a long prompt is prefilled in chunks beside everyone's steps; one session's failure stays its own."""

import sys
import time

import pytest
import torch

from decoding.forward import forward_one
from decoding.serving import gil
from decoding.serving import scheduler as scheduling
from decoding.serving.scheduler import Scheduler
from decoding.watch import Cancelled
from tests.helpers.serving import greedy_alone, greedy_through, together

PROMPTS = ([5, 9, 2, 7], [11, 3], [8, 8, 1, 4, 6, 2, 9, 10, 12], [3], [2, 4, 6, 8, 10, 12, 14])
TOLERANCE = 1e-4


@pytest.fixture()
def scheduler(tiny):
    return Scheduler(tiny, chunk_tokens=4)


def test_concurrent_sessions_get_the_tokens_each_gets_alone(tiny, scheduler):
    runs = together(lambda ids: greedy_through(scheduler, list(ids), 6), [(p,) for p in PROMPTS])
    for ids, (tokens, seen, _) in zip(PROMPTS, runs):
        alone_tokens, alone_seen = greedy_alone(tiny, list(ids), 6)
        assert tokens == alone_tokens
        assert max(float((a - b).abs().max()) for a, b in zip(seen, alone_seen)) < TOLERANCE
    assert max(p.rows for _, _, passes in runs for p in passes) > 1, "the sessions never shared a pass"


def test_alone_mode_is_the_solo_path_bit_for_bit_even_beside_others(tiny, scheduler):
    jobs = [(list(PROMPTS[0]), True)] + [(list(p), False) for p in PROMPTS[1:]]
    runs = together(lambda ids, alone: greedy_through(scheduler, ids, 5, alone), jobs)
    tokens, seen, passes = runs[0]
    alone_tokens, alone_seen = greedy_alone(tiny, list(PROMPTS[0]), 5)
    assert tokens == alone_tokens
    assert all(torch.equal(a, b) for a, b in zip(seen, alone_seen))
    assert {p.mode for p in passes} == {"alone"} and {p.rows for p in passes} == {1}
    assert all(p.noise == 0 for p in passes)


def test_one_session_alone_on_the_server_runs_the_solo_path(tiny, scheduler):
    tokens, seen, passes = greedy_through(scheduler, list(PROMPTS[2]), 4)
    alone_tokens, alone_seen = greedy_alone(tiny, list(PROMPTS[2]), 4)
    assert tokens == alone_tokens and all(torch.equal(a, b) for a, b in zip(seen, alone_seen))
    assert {p.mode for p in passes} == {"solo"}


def test_a_long_prompt_is_prefilled_in_chunks_while_others_step(tiny, scheduler):
    long_prompt = [(i * 7) % 50 + 1 for i in range(40)]
    jobs = [(list(p),) for p in PROMPTS[:3]]

    def once_others_step(ids):  # the long prompt arrives while the others are decoding
        deadline = time.monotonic() + 30
        while not any(t.decode_rows for t in scheduler.log.recent()) and time.monotonic() < deadline:
            time.sleep(0.001)
        return scheduler.forward(ids, None, 0)

    results = together(
        lambda ids: once_others_step(ids) if len(ids) == 40 else greedy_through(scheduler, ids, 30),
        [(long_prompt,)] + jobs,
    )
    logits, cache, passed = results[0]
    assert passed.chunks > 1 and cache.get_seq_length() == 40
    assert (logits - forward_one(tiny, long_prompt, None, 0)[0]).abs().max() < TOLERANCE
    assert any(t.prefill_tokens and t.decode_rows for t in scheduler.log.recent()), "no chunk rode with a decode row"


def test_a_long_prompt_alone_goes_in_bites_of_the_whole_prefill_size(tiny, scheduler):
    long_prompt = [(i * 7) % 50 + 1 for i in range(300)]
    logits, cache, passed = scheduler.forward(long_prompt, None, 0)
    assert passed.chunks == 2 and passed.mode == "solo"  # 256 tokens with no one stepping, then the last 44 whole
    assert cache.get_seq_length() == 300
    assert (logits - forward_one(tiny, long_prompt, None, 0)[0]).abs().max() < TOLERANCE


def test_a_failing_row_fails_only_its_own_session(tiny, scheduler):
    bad = [tiny.vocab_size + 5]  # no such token: the embedding lookup fails

    def attempt(ids):
        try:
            return greedy_through(scheduler, ids, 3)[0]
        except (IndexError, RuntimeError) as err:
            return err

    results = together(attempt, [(bad,)] + [(list(p),) for p in PROMPTS[:3]])
    assert isinstance(results[0], Exception)
    assert results[1:] == [greedy_alone(tiny, list(p), 3)[0] for p in PROMPTS[:3]]


def test_the_noise_is_measured_on_this_server(tiny, scheduler):
    noise = scheduler.calibrate()
    assert noise.dtype == "float32" and noise.rows >= 2
    assert 0 <= noise.value < TOLERANCE


def test_every_pass_is_logged_as_a_tick(tiny, scheduler):
    together(lambda ids: greedy_through(scheduler, list(ids), 3), [(p,) for p in PROMPTS])
    ticks = scheduler.log.recent()
    assert sum(t.decode_rows for t in ticks) == 3 * len(PROMPTS)
    assert sum(t.prefill_tokens for t in ticks) == sum(len(p) for p in PROMPTS)
    assert all(t.ms > 0 and 1 <= t.rows <= len(PROMPTS) for t in ticks)


def test_bad_chunk_size_is_named(tiny):
    with pytest.raises(ValueError, match=r"chunk_tokens must be an integer in \[1, 4096\], got 0"):
        Scheduler(tiny, chunk_tokens=0)


def test_a_ticks_passes_run_first_in_line_for_the_interpreter_lock(tiny, scheduler, monkeypatch):
    """The tick runs with the switch interval lowered (decoding/serving/gil.py), and it is put back after."""
    seen, tick = [], scheduler._tick

    def watched(taken):
        seen.append(sys.getswitchinterval())
        return tick(taken)

    monkeypatch.setattr(scheduler, "_tick", watched)
    deadline = time.monotonic() + 10  # another test's scheduler may still be leaving its last tick's `urgent`
    while gil._running and time.monotonic() < deadline:
        time.sleep(0.001)
    before = sys.getswitchinterval()
    greedy_through(scheduler, list(PROMPTS[0]), 2)
    assert seen and all(interval == pytest.approx(gil.URGENT_S) for interval in seen)
    assert sys.getswitchinterval() == before


def test_a_prompt_in_chunks_stops_between_two_when_its_session_asks_and_the_server_goes_on(tiny, scheduler):
    long_prompt = [(i * 7) % 50 + 1 for i in range(600)]
    asked = []

    def stop():  # the student presses Stop once the first bite has run
        asked.append(len([t for t in scheduler.log.recent() if t.prefill_tokens]))
        return asked[-1] >= 1

    with pytest.raises(Cancelled, match="stopped after 256 of 600 prompt tokens"):
        scheduler.forward(long_prompt, None, 0, stop=stop)
    assert sum(t.prefill_tokens for t in scheduler.log.recent()) == 256  # nothing ran after the stop
    logits, cache, passed = scheduler.forward(long_prompt, None, 0)  # the same prompt again, from scratch
    assert cache.get_seq_length() == 600 and passed.mode != "cached"
    assert (logits - forward_one(tiny, long_prompt, None, 0)[0]).abs().max() < TOLERANCE


def test_a_long_prompt_goes_in_chunks_while_a_class_steps_even_between_two_of_its_steps(tiny, scheduler):
    greedy_through(scheduler, list(PROMPTS[0]), 1)  # a step a moment ago: the class is stepping
    long_prompt = [(i * 7) % 50 + 1 for i in range(40)]
    _, cache, passed = scheduler.forward(long_prompt, None, 0)  # no step waits now, yet it goes in chunks of 4
    assert passed.chunks == 10 and cache.get_seq_length() == 40


def test_deeper_into_a_long_prompt_its_chunks_shrink_while_others_step(tiny):
    scheduler = Scheduler(tiny, chunk_tokens=64)
    assert [scheduler._chunk_at(p) for p in (0, 512, 1024, 2048, 4096, 8000)] == [64, 64, 32, 16, 16, 16]


def test_a_prompt_its_session_may_stop_takes_bites_its_last_pace_says_end_soon(tiny, scheduler, monkeypatch):
    long_prompt = [(i * 7) % 50 + 1 for i in range(300)]
    monkeypatch.setattr(scheduling, "STOPPABLE_BITE_MS", 1e-9)  # a machine too slow for any bite: the least
    logits, cache, passed = scheduler.forward(long_prompt, None, 0, stop=lambda: False)
    assert passed.chunks == 1 + 3 and cache.get_seq_length() == 300  # 256 (no pace yet), then bites of 16: 44 = 3
    assert (logits - forward_one(tiny, long_prompt, None, 0)[0]).abs().max() < TOLERANCE
    assert scheduler.forward(long_prompt[::-1], None, 0)[2].chunks == 2  # no Stop to read: bites of 256
