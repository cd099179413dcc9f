"""Sessions never see each other: interleaved runs give the tokens each gives alone, a released or expired run
id reads nothing, a saved trace holds only its own session's data and no server paths, and only allowlisted
models can be loaded from the browser."""

import json
import os
import tempfile
import time
from pathlib import Path

import gradio as gr
import pytest

from decoding.models import BUNDLED, EXTRA_ENV, allowed_models, cache_root
from tests.helpers.step_knobs import CONFIG, page
from tests.helpers.step_knobs import KNOBS as SAMPLING
from ui import context
from ui.context import RAW, AppConfig, get_model
from ui.events import teach
from ui.sessions import STORE, release_run
from ui.step import handlers as h

GREEDY = {**SAMPLING, "temperature": 0.0}


def prefill(message: str, seed: int, config: AppConfig = CONFIG, max_new: int = 8) -> str:
    return h.prefill(config, None, config.model_id, message, RAW, seed, max_new, "", page(SAMPLING)).run_id


def tokens_alone(message: str, seed: int, n: int, knobs) -> list[int]:
    run_id = prefill(message, seed)
    for _ in range(n):
        h.step(run_id, page(knobs))
    tokens = STORE.get(run_id).trace.token_ids
    STORE.release(run_id)
    return tokens


def test_interleaved_sessions_give_the_tokens_each_gives_alone(tiny):
    alone_a = tokens_alone("alpha", 1, 6, SAMPLING)
    alone_b = tokens_alone("bravo", 2, 6, GREEDY)
    a, b = prefill("alpha", 1), prefill("bravo", 2)
    for i in range(6):
        h.step(a, page(SAMPLING))
        h.step(b, page(GREEDY))
        if i == 2:  # one session goes back and redoes a step while the other carries on
            h.back(a, page(SAMPLING))
            h.step(a, page(SAMPLING))
    assert STORE.get(a).trace.token_ids == alone_a
    assert STORE.get(b).trace.token_ids == alone_b
    STORE.release(a)
    STORE.release(b)


def test_a_released_run_id_reads_nothing(tiny):
    run_id = prefill("alpha", 1)
    h.reset(run_id)
    with pytest.raises(gr.Error, match="press Prefill"):
        teach(h.step)(run_id, page(SAMPLING))
    with pytest.raises(gr.Error, match="press Prefill"):
        teach(h.save_trace)(run_id)


def test_an_expired_run_id_reads_nothing(tiny, monkeypatch):
    now = [time.monotonic()]
    monkeypatch.setattr(STORE, "clock", lambda: now[0])
    run_id = prefill("alpha", 1)
    now[0] += STORE.ttl_s + 1
    with pytest.raises(gr.Error, match="expired"):
        teach(h.step)(run_id, page(SAMPLING))


def test_closing_the_page_releases_its_run():
    from ui.step import tab as step_tab

    with gr.Blocks() as demo:
        step_tab.build(CONFIG)
    # every gr.State has a delete callback (gradio's default does nothing): the run id's is the store's release
    (state,) = [b for b in demo.blocks.values() if isinstance(b, gr.State) and b.delete_callback is release_run]
    run_id = prefill("alpha", 1)
    state.delete_callback(run_id)  # what gradio calls when the page closes
    with pytest.raises(ValueError, match="run is no longer on the server"):  # released as the page closed
        STORE.get(run_id)


def server_paths() -> list[str]:
    paths = {"/root", "/tmp", tempfile.gettempdir(), str(cache_root()), str(Path.home()), os.getcwd()}
    return sorted(p for p in paths if p not in ("/", ""))


def assert_private(json_path: str, own: str, other: str) -> None:
    text = Path(json_path).read_text(encoding="utf-8")
    for path in server_paths():
        assert path not in text, f"server path {path!r} in the saved trace"
    data = json.loads(text)
    assert data["prompt"] == own
    assert other not in text


def test_a_saved_trace_holds_no_server_paths_and_only_its_session(tiny):
    mine, theirs = prefill("my own words", 1), prefill("someone else's secret", 2)
    for _ in range(3):
        h.step(mine, page(SAMPLING))
        h.step(theirs, page(SAMPLING))
    json_path, csv_path = h.save_trace(mine)
    assert_private(json_path, "my own words", "secret")
    assert "secret" not in Path(csv_path).read_text(encoding="utf-8")
    STORE.release(mine)
    STORE.release(theirs)


@pytest.mark.bundled
def test_a_saved_trace_of_the_bundled_model_names_no_cache_path(bundled):
    config = AppConfig(model_id=BUNDLED, device="cpu")
    run_id = prefill("The capital of France is", 0, config, max_new=2)
    h.step(run_id, page(GREEDY))
    json_path, _ = h.save_trace(run_id)
    assert_private(json_path, "The capital of France is", "secret")
    STORE.release(run_id)


@pytest.mark.parametrize(
    "model_id", ["/etc/passwd", "./models/evil", "../../root/.cache", "someone/any-model", "gpt2:latest", " "]
)
def test_the_browser_cannot_load_a_path_or_an_unlisted_hub_id(model_id, monkeypatch):
    calls = []
    monkeypatch.setattr(context, "load_model", lambda *a, **k: calls.append(a))
    with pytest.raises(gr.Error, match="is not available here"):
        teach(h.prefill)(CONFIG, None, model_id, "hello", RAW, 0, 4, "", page(SAMPLING))
    assert calls == []  # nothing from the browser reached the loader


def test_the_environment_variable_extends_the_allowlist(monkeypatch):
    monkeypatch.setenv(EXTRA_ENV, " org/extra-model , org/second ")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no network here: the load must fail fast, but past the allowlist
    assert {"org/extra-model", "org/second"} <= set(allowed_models())
    with pytest.raises(gr.Error, match="not reachable") as info:
        get_model(CONFIG, "org/extra-model")
    assert "not available here" not in info.value.message
    monkeypatch.delenv(EXTRA_ENV)
    with pytest.raises(gr.Error, match="is not available here"):
        get_model(CONFIG, "org/extra-model")
