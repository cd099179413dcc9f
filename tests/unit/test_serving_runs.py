"""Runs stepped through the scheduler: alone mode is generate() to the token; sessions stepped together, seeded,
with penalties, forced tokens and Back, draw exactly what each draws alone; each step records who shared its pass."""

import threading

import pytest

from decoding.loop import Run, run_to_end
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.serving.scheduler import Scheduler
from tests.helpers.fidelity import FIDELITY, generate_ids

MESSAGES = ("Tell me a story.", "hi", "What is two plus two, and why?", "Name three colours of the rainbow please.")
SESSIONS = [  # (settings, seed): greedy, sampling, penalties, truncations
    (SamplerSettings(temperature=0), 0),
    (SamplerSettings(temperature=0.9, top_k=20), 3),
    (SamplerSettings(top_p=0.8, repetition_penalty=1.3, frequency_penalty=0.5), 5),
    (SamplerSettings(temperature=1.2, min_p=0.05, presence_penalty=0.4), 9),
]


@pytest.fixture()
def scheduler(tiny):
    return Scheduler(tiny, chunk_tokens=8)


def prompts(tiny):
    return [encode_prompt(tiny.tokenizer, m, chat=True) for m in MESSAGES]


@pytest.mark.parametrize(("settings", "seed"), FIDELITY[:5], ids=lambda v: str(v) if isinstance(v, int) else None)
def test_alone_mode_through_the_scheduler_equals_model_generate(tiny, scheduler, settings, seed):
    prompt = prompts(tiny)[0]
    trace = run_to_end(tiny, prompt, settings, seed=seed, max_new_tokens=16, scheduler=scheduler, alone=True)
    assert trace.token_ids == generate_ids(tiny, prompt, settings, seed, 16)
    assert {s.pass_mode for s in trace.steps} == {"alone"}


def script(run: Run, settings: SamplerSettings) -> list[int]:
    """What a student might do: step, force a token, go back, step on; returns the final tokens."""
    run.prefill()
    for _ in range(5):
        run.step(settings)
    run.step(settings, force_id=7)
    run.back()
    run.back()
    while not run.done and len(run.generated) < 12:
        run.step(settings)
    return run.generated


def test_sessions_stepped_together_draw_what_each_draws_alone(tiny, scheduler):
    alone = [script(Run(tiny, p, seed=seed, max_new_tokens=20), s) for p, (s, seed) in zip(prompts(tiny), SESSIONS)]
    runs = [
        Run(tiny, p, seed=seed, max_new_tokens=20, scheduler=scheduler) for p, (_, seed) in zip(prompts(tiny), SESSIONS)
    ]
    together = [None] * len(runs)
    barrier = threading.Barrier(len(runs))

    def student(i):
        barrier.wait()
        together[i] = script(runs[i], SESSIONS[i][0])

    threads = [threading.Thread(target=student, args=(i,)) for i in range(len(runs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert together == alone
    shared = [s for run in runs for s in run.trace.steps if s.pass_mode == "packed"]
    assert shared and all(2 <= s.rows <= len(runs) for s in shared), "no step shared a pass"


def test_toggling_alone_mid_run_changes_only_how_the_next_passes_run(tiny, scheduler):
    prompt = prompts(tiny)[1]
    run = Run(tiny, prompt, max_new_tokens=6, scheduler=scheduler)
    run.prefill()
    run.step(SamplerSettings(temperature=0))
    run.alone = True
    later = [run.step(SamplerSettings(temperature=0)) for _ in range(3)]
    assert [s.pass_mode for s in later[1:]] == ["alone", "alone"]
    assert run.generated == run_to_end(tiny, prompt, SamplerSettings(temperature=0), max_new_tokens=6).token_ids[:4]


@pytest.mark.bundled
def test_bundled_model_sessions_stepped_together_match_each_alone(bundled):
    scheduler = Scheduler(bundled)
    messages = ("Here is one fact about the moon:", "The capital of France is", "def add(a, b):", "Once upon a time")
    prompts_ = [encode_prompt(bundled.tokenizer, m, chat=False) for m in messages]
    settings = [(SamplerSettings(temperature=0), 0), (SamplerSettings(temperature=0.8, top_p=0.9), 4)] * 2
    runs = [
        Run(bundled, p, seed=seed, max_new_tokens=12, scheduler=scheduler) for p, (_, seed) in zip(prompts_, settings)
    ]
    barrier = threading.Barrier(len(runs))

    def student(run, s):
        barrier.wait()
        run.prefill()
        while not run.done:
            run.step(s)

    threads = [threading.Thread(target=student, args=(r, s)) for r, (s, _) in zip(runs, settings)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    for run, p, (s, seed) in zip(runs, prompts_, settings):
        assert run.generated == run_to_end(bundled, p, s, seed=seed, max_new_tokens=12).token_ids
    assert max(s.rows for run in runs for s in run.trace.steps) > 1
    # float32: packed and solo logits differ by float noise only; none at all where the CPU's kernels sum every row
    # in the same order whatever the rows (the (in, out) weight layout on this project's AMD EPYC: decoding.layout)
    assert 0 <= scheduler.noise.value < 1e-3
