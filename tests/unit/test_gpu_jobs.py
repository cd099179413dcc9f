"""The measurements that want a GPU (ui.gpu) cross into a forked worker as plain data, as on a ZeroGPU Space: the
test stand-in for `spaces` forks and pickles every call, refuses a model, a tensor or a session's run, and Cancel
reaches the worker through its file. Off ZeroGPU the same job runs in this process on the app's model."""

import os
import re
from pathlib import Path

import pytest
import torch

from decoding.models import TINY, load_model
from decoding.pipeline import SamplerSettings
from decoding.speculative.records import PROMPT_LOOKUP
from decoding.watch import Cancelled
from tests.helpers.zerogpu import spaces as standin
from ui import gpu
from ui.context import AppConfig
from ui.events import CancelFlags
from ui.nondeterminism.handlers import checked, experiment
from ui.speculative.handlers import Started, raced

TINY_APP = AppConfig(model_id=TINY, device="cpu", dtype="float32")
ROOT = Path(__file__).resolve().parents[2]


class Session:
    def __init__(self, session_hash: str):
        self.session_hash = session_hash


def asked():
    return checked(prompt="The capital of France is", condition="padded", dtype="float32", sizes=[2], new_tokens=2)


def job(cancel_file: str, *args, measure=experiment) -> gpu.Job:
    if measure is experiment and not args:
        args = (asked(), False)
    return gpu.Job(measure, args, TINY_APP, cancel_file, seconds=30)


def worker_pid(lm, watch) -> int:
    return os.getpid()


def refuses_its_input(lm, seed: int, watch):
    raise ValueError(f"Seed must be a whole number from 0 to 9; got {seed}")


def a_tensor(lm, watch):
    return torch.zeros(2)


@pytest.fixture
def on_gpu(tmp_path, monkeypatch):
    """`ui.gpu.in_worker` as ZeroGPU calls it: in a fresh fork, arguments and result pickled; calls logged."""
    monkeypatch.setenv("ZEROGPU_STANDIN_LOG", str(tmp_path / "calls.jsonl"))
    return gpu.gpu_call(standin)


def test_a_measurement_crosses_into_a_forked_worker_and_its_plain_result_comes_back(tmp_path, on_gpu):
    outcome = on_gpu(job(str(tmp_path / "cancel")))
    assert outcome.error is None and not outcome.cancelled
    assert len(outcome.value.solo.token_ids) == 2 and outcome.value.device == "cpu"
    assert on_gpu(job(str(tmp_path / "cancel"), measure=worker_pid)).value != os.getpid()


def test_the_stand_in_refuses_a_model_or_a_tensor_either_way(tmp_path, on_gpu):
    lm = load_model(TINY, "cpu", "float32")
    with pytest.raises(standin.NotPlainData, match="LoadedModel"):
        on_gpu(job(str(tmp_path / "c"), lm))
    with pytest.raises(standin.NotPlainData, match="Tensor"):
        on_gpu(job(str(tmp_path / "c"), torch.ones(1)))
    with pytest.raises(standin.NotPlainData, match="the result of in_worker.*Tensor"):
        on_gpu(job(str(tmp_path / "c"), measure=a_tensor))


def test_cancel_reaches_the_worker_through_its_file_and_a_new_run_starts_clear(on_gpu):
    flags = CancelFlags()
    path = flags.file_for(Session("a"))
    flags.cancel(Session("a"))
    assert on_gpu(job(path)).cancelled
    assert not on_gpu(job(flags.file_for(Session("a")))).cancelled  # pressing Run again clears the flag
    assert not Path(flags.file_for(Session("b"))).exists()  # another session's flag is its own


def test_a_value_error_in_the_worker_reaches_the_person_as_its_message(tmp_path, on_gpu, monkeypatch):
    outcome = on_gpu(job(str(tmp_path / "c"), 12, measure=refuses_its_input))
    assert outcome.error == "Seed must be a whole number from 0 to 9; got 12"
    monkeypatch.setattr(gpu, "_on_gpu", on_gpu)
    monkeypatch.setattr(gpu, "ZEROGPU", True)
    with pytest.raises(ValueError, match="from 0 to 9; got 12"):
        gpu.run(TINY_APP, job(str(tmp_path / "c"), 12, measure=refuses_its_input), None, "a test")


def test_off_zerogpu_a_job_runs_in_this_process_on_the_apps_model(tmp_path):
    seen = []
    flags = CancelFlags()
    value = gpu.run(TINY_APP, job(flags.file_for(None)), lambda f, desc: seen.append(desc), "a test")
    assert len(value.solo.token_ids) == 2 and seen  # the progress bar heard from it
    assert gpu.run(TINY_APP, job("", measure=worker_pid), None, "a test") == os.getpid()
    path = flags.file_for(None)
    flags.cancel(None)
    with pytest.raises(Cancelled):
        gpu.run(TINY_APP, job(path), lambda *a, **k: None, "a test")


def test_off_zerogpu_every_measurement_gives_its_freed_memory_back_as_it_ends_even_a_refused_one(tmp_path, monkeypatch):
    trims = []
    monkeypatch.setattr(gpu.memory, "give_back", lambda: trims.append(True))
    gpu.run(TINY_APP, job("", measure=worker_pid), None, "a test")
    with pytest.raises(ValueError, match="got 12"):
        gpu.run(TINY_APP, job("", 12, measure=refuses_its_input), None, "a test")
    assert len(trims) == 2


def test_only_ui_gpu_asks_for_the_gpu_and_no_model_event_is_wrapped_whole():
    asking = [
        str(path.relative_to(ROOT))
        for folder in ("ui", "decoding", "visuals")
        for path in (ROOT / folder).rglob("*.py")
        if re.search(r"spaces\.GPU|import spaces", path.read_text())
    ]
    assert asking == ["ui/gpu.py"]
    assert "gpu(" not in (ROOT / "ui" / "events.py").read_text()


def test_the_speculative_speed_up_is_the_whole_run_again_in_the_worker_same_tokens_as_plain(on_gpu):
    key = Started(
        model_id=TINY,
        ids=(5, 6, 7, 8, 5, 6, 7, 8, 5, 6),
        source=PROMPT_LOOKUP,
        k=3,
        layer=None,
        max_new=6,
        settings=SamplerSettings(temperature=0),
        seed=0,
    )
    comparison = on_gpu(gpu.Job(raced, (key,), TINY_APP, gpu.NO_CANCEL, seconds=30)).value
    assert comparison.identical and comparison.spec.rounds  # greedy: speculation writes plain decoding's tokens
    assert comparison.spec_ms > 0 and comparison.plain_ms > 0
