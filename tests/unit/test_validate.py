"""Every bad input the classroom can send, through the step tab's real handlers on the tiny model: each one is a
gr.Error whose message names the value and the allowed range, and the session is still usable afterwards (the
next good step works and the run's bookkeeping still has one record per step)."""

from pathlib import Path

import gradio as gr
import pytest

from decoding import values
from decoding.knobs import settings_from
from decoding.models import TINY
from decoding.prompts import MAX_PROMPT_CHARS
from tests.helpers.step_knobs import CONFIG, KNOBS, page
from tests.helpers.step_view import sent
from ui import validate
from ui.context import CHAT, RAW
from ui.events import teach
from ui.running import END
from ui.sessions import STORE
from ui.step import handlers as h
from visuals.distribution import MODES

GOOD = {"model": TINY, "message": "hello", "template": RAW, "seed": 0, "max_new": 6, "stops": "", "mode": MODES[0]}
VOCAB = 259  # the tiny model's byte-level vocabulary
CONTEXT = 512  # the tiny model's context window


def knobs(**changes) -> dict:
    return {**KNOBS, **changes}


def prefill(run_id=None, knob_changes=None, **changes):
    a = {**GOOD, **changes}
    args = (a["model"], a["message"], a["template"], a["seed"], a["max_new"], a["stops"])
    return teach(h.prefill)(CONFIG, run_id, *args, page(knobs(**(knob_changes or {})), mode=a["mode"]))


def step(run_id, **knob_changes):
    return teach(h.step)(run_id, page(knobs(**knob_changes)))


@pytest.fixture
def session(tiny):
    """One browser session's live run, released when the test ends."""
    run_id = prefill().run_id
    yield run_id
    STORE.release(run_id)


def assert_usable(run_id) -> None:
    """A good step right after the error works, and the run still keeps one record per step."""
    entry = STORE.get(run_id)
    before = len(entry.trace.steps)
    step(run_id)
    assert len(entry.trace.steps) == before + 1
    assert len(entry.view.records) == len(entry.trace.steps)


def assert_teaches(call, *parts) -> None:
    with pytest.raises(gr.Error) as info:
        call()
    for part in parts:
        assert part in info.value.message, f"{part!r} missing from {info.value.message!r}"


TEMPERATURE = "Temperature must be 0 (greedy) or between 0.01 and 3"
PREFILL_CASES = {
    "empty prompt": ({"message": ""}, {}, ["the prompt is empty"]),
    "whitespace-only prompt": ({"message": " \n\t "}, {}, ["the prompt is empty"]),
    "prompt over the context window": ({"message": "a" * 600}, {}, ["600 tokens", f"{CONTEXT} tokens"]),
    "prompt over the character limit": ({"message": "a" * 30_000}, {}, ["30,000 characters", f"{MAX_PROMPT_CHARS:,}"]),
    "prompt plus max new tokens over the window": (
        {"message": "a" * 400, "max_new": 200},
        {},
        ["400 tokens", "(200)", f"{CONTEXT} tokens"],
    ),
    "temperature None": ({}, {"temperature": None}, [TEMPERATURE, "got an empty box"]),
    "temperature as text": ({}, {"temperature": "warm"}, [TEMPERATURE, "got 'warm'"]),
    "temperature NaN": ({}, {"temperature": float("nan")}, [TEMPERATURE, "got nan"]),
    "temperature below 0": ({}, {"temperature": -0.5}, [TEMPERATURE, "got -0.5"]),
    "temperature tiny but positive": ({}, {"temperature": 1e-300}, [TEMPERATURE, "got 1e-300"]),
    "top-k below 0": ({}, {"top_k": -1}, ["Top-k must be a whole number in [0, 200] (0 = off)", "got -1"]),
    "top-k above its slider": ({}, {"top_k": 300}, ["Top-k", "[0, 200]", "got 300"]),
    "top-k not whole": ({}, {"top_k": 2.5}, ["Top-k", "[0, 200]", "got 2.5"]),
    "top-k infinite": ({}, {"top_k": float("inf")}, ["Top-k", "[0, 200]", "got inf"]),
    "top-k None": ({}, {"top_k": None}, ["Top-k", "[0, 200]", "got an empty box"]),
    "top-p 0": ({}, {"top_p": 0.0}, ["Top-p must be between 0.01 and 1 (1 = off)", "got 0.0"]),
    "top-p above 1": ({}, {"top_p": 1.5}, ["Top-p", "between 0.01 and 1", "got 1.5"]),
    "top-p NaN": ({}, {"top_p": float("nan")}, ["Top-p", "between 0.01 and 1", "got nan"]),
    "min-p 1": ({}, {"min_p": 1.0}, ["Min-p must be between 0 and 0.99 (0 = off)", "got 1.0"]),
    "min-p below 0": ({}, {"min_p": -0.1}, ["Min-p", "got -0.1"]),
    "repetition penalty 0": (
        {},
        {"repetition_penalty": 0.0},
        ["Repetition penalty must be between 0.5 and 2 (1 = off)", "got 0"],
    ),
    "repetition penalty below 0": ({}, {"repetition_penalty": -1.0}, ["Repetition penalty", "got -1.0"]),
    "repetition penalty tiny but positive": (
        {},
        {"repetition_penalty": 1e-40},
        ["Repetition penalty", "0.5 and 2", "got 1e-40"],
    ),
    "presence penalty out of range": (
        {},
        {"presence_penalty": 3.0},
        ["Presence penalty must be between -2 and 2 (0 = off)", "got 3.0"],
    ),
    "frequency penalty None": (
        {},
        {"frequency_penalty": None},
        ["Frequency penalty", "between -2 and 2", "got an empty box"],
    ),
    "unknown engine order": ({}, {"order": "fastest"}, ["transformers", "got 'fastest'"]),
    "max new tokens above the cap": ({"max_new": 5000}, {}, ["[1, 4096]", "got 5000"]),
    "max new tokens 0": ({"max_new": 0}, {}, ["[1, 4096]", "got 0"]),
    "max new tokens NaN": ({"max_new": float("nan")}, {}, ["[1, 4096]", "got nan"]),
    "max new tokens cleared": ({"max_new": None}, {}, ["[1, 4096]", "got an empty box"]),
    "seed NaN": ({"seed": float("nan")}, {}, ["[0, 4294967295]", "got nan"]),
    "seed negative": ({"seed": -1}, {}, ["[0, 4294967295]", "got -1"]),
    "seed 2^32": ({"seed": 2**32}, {}, ["[0, 4294967295]", "got 4294967296"]),
    "too many stop strings": ({"stops": "\n".join(f"s{i}" for i in range(17))}, {}, ["at most 16", "got 17"]),
    "a huge stop string": ({"stops": "x" * 5000}, {}, ["5,000 characters", "1 to 200"]),
    "a stop string with a lone surrogate": ({"stops": "ok\nbad\ud800"}, {}, ["stop string 2", "U+D800"]),
    "unknown model id": ({"model": "gpt-5"}, {}, ["'gpt-5'", TINY]),
    "a file path as model id": ({"model": "/etc/passwd"}, {}, ["'/etc/passwd'", TINY]),
    "a malformed model id": ({"model": 42}, {}, ["42", TINY]),
    "unknown chart mode": ({"mode": "bars"}, {}, ["'bars'", MODES[0]]),
}


@pytest.mark.parametrize("changes, knob_changes, parts", PREFILL_CASES.values(), ids=PREFILL_CASES.keys())
def test_bad_prefill_input_names_value_and_range_and_keeps_the_session(session, changes, knob_changes, parts):
    steps_before = len(STORE.get(session).trace.steps)
    assert_teaches(lambda: prefill(session, knob_changes, **changes), *parts)
    assert len(STORE.get(session).trace.steps) == steps_before  # the old run is still there, untouched
    assert_usable(session)


STEP_CASES = {
    "temperature NaN": ({"temperature": float("nan")}, [TEMPERATURE, "got nan"]),
    "top-k None": ({"top_k": None}, ["Top-k", "[0, 200]", "got an empty box"]),
    "top-p 0": ({"top_p": 0.0}, ["Top-p must be between 0.01 and 1 (1 = off)", "got 0.0"]),
    "min-p as text": ({"min_p": "lots"}, ["Min-p", "between 0 and 0.99", "got 'lots'"]),
    "repetition penalty 0": (
        {"repetition_penalty": 0},
        ["Repetition penalty must be between 0.5 and 2 (1 = off)", "got 0"],
    ),
}


@pytest.mark.parametrize("knob_changes, parts", STEP_CASES.values(), ids=STEP_CASES.keys())
def test_bad_knobs_on_step_back_and_preview_change_nothing(session, knob_changes, parts):
    step(session)
    step(session)
    tokens = STORE.get(session).trace.token_ids
    assert_teaches(lambda: step(session, **knob_changes), *parts)
    assert_teaches(lambda: teach(h.back)(session, page(knobs(**knob_changes))), *parts)
    assert_teaches(
        lambda: teach(h.settings_changed)(session, page(knobs(**knob_changes)), knobs(**knob_changes)), *parts
    )
    assert STORE.get(session).trace.token_ids == tokens
    assert_usable(session)


@pytest.mark.parametrize("force_id", [VOCAB, -1, 10**9, "abc", float("nan"), 2.5])
def test_a_bad_forced_token_names_the_range_and_leaves_the_run_as_it_was(session, force_id):
    step(session)
    reference = prefill().run_id  # the same run without the bad force
    step(reference)
    step(reference)
    assert_teaches(lambda: teach(h.force)(session, force_id, page(knobs())), f"[0, {VOCAB - 1}]", "got")
    assert_usable(session)
    assert STORE.get(session).trace.token_ids == STORE.get(reference).trace.token_ids
    STORE.release(reference)


def test_a_forced_token_from_the_click_box_arrives_as_text_and_works(session):
    teach(h.force)(session, "65", page(knobs()))
    assert STORE.get(session).trace.token_ids == [65]


@pytest.mark.parametrize("n", [0, -3, 2.5, None, float("nan"), float("inf"), 5000, "many"])
def test_run_n_refuses_a_bad_n_with_the_range(session, n):
    assert_teaches(lambda: list(teach(h.run_steps)(session, n, page(knobs()))), "[1, 4096]", "got")
    assert_usable(session)


def test_step_and_run_on_a_finished_run_keep_its_view_and_say_to_prefill_again(session):
    *_, last, end = h.run_to_end(session, page(knobs()))
    assert end is END  # a run ends on it: gradio sends a generator's last value again when it ends (ui.running)
    entry = STORE.get(session)
    assert entry.run.done and len(entry.trace.steps) == GOOD["max_new"]
    again = [step(session), *h.run_steps(session, 3, page(knobs())), *h.run_to_end(session, page(knobs()))]
    assert len(again) == 3  # one view each: a Run on a finished run never leaves the page blank
    for view in again:
        # the same strip, loop diagram and stop line: only the chart is drawn again (its number changes)
        assert all(op[1].startswith("#step-dist") for op in view.stage["ops"])
        stop = sent(session)["step-stop"]
        assert "finished" in stop and "press Prefill to run again with the new settings" in stop
        assert "lc-bar" in sent(session)["step-dist"]  # the chart still shows the last step
    assert len(entry.view.records) == len(entry.trace.steps)
    teach(h.back)(session, page(knobs()))
    assert_usable(session)


def test_back_with_nothing_to_undo_says_so(session):
    assert_teaches(lambda: teach(h.back)(session, page(knobs())), "nothing to go back to")
    assert_usable(session)


@pytest.mark.parametrize("stops", ["", "\n\n", None])
def test_an_empty_stop_list_means_no_stop_strings(tiny, stops):
    run_id = prefill(stops=stops).run_id
    assert STORE.get(run_id).trace.stop_strings == []
    STORE.release(run_id)


def test_stop_strings_keep_non_ascii_and_backslashes_as_typed():
    typed = "。\\n\nend\\\nC:\\x\n\\\\"
    assert validate.stop_strings(typed) == ["。\n", "end\\", "C:\\x", "\\"]


UNICODE = {
    "emoji": "Tell me 😀👩‍👩‍👧 about 🇫🇷",
    "right-to-left": "שלום עולם، مرحبا بالعالم",
    "control characters": "a\x00b\x07c\x1b[31m\u202ed\r\n",
    "lone surrogates": "x\ud800y\udfff",
    "combining marks": "e\u0301\u0301\u0301 Z\u0351\u0352",
}


@pytest.mark.parametrize("template", [RAW, CHAT])
@pytest.mark.parametrize("text", UNICODE.values(), ids=UNICODE.keys())
def test_unusual_unicode_prompts_run_and_save(tiny, text, template):
    run_id = prefill(message=text, template=template).run_id
    step(run_id)
    step(run_id)
    json_path, _ = h.save_trace(run_id)
    with open(json_path, encoding="utf-8") as f:
        assert '"prompt"' in f.read()
    STORE.release(run_id)


def test_a_full_server_frees_the_oldest_run_and_tells_its_session(tiny, monkeypatch):
    oldest = prefill().run_id
    monkeypatch.setattr(STORE, "max_items", 1)  # a full server: the next session's run takes the place of the oldest
    monkeypatch.setattr(STORE, "in_use_s", 0)  # which is idle (the fair share never frees a run in use)
    newest = prefill().run_id
    assert STORE.get(newest)  # (the store may also hold other tests' class rounds: their own budget, never freed here)
    told = ["run was freed after under a minute idle to make room for other sessions", "press Prefill"]
    assert_teaches(lambda: step(oldest), *told)
    STORE.release(newest)


TRACE_KEYS = '"model_id": 1, "model_label": 2, "device": 3, "dtype": 4, "prompt": 5, "prompt_ids": "ab", "seed": 0'
WRONG_VALUES = "{" + TRACE_KEYS + ', "prompt_tokens": 7, "max_new_tokens": 4, "stop_strings": 9}'
NOT_TRACES = {
    "a list": b"[1, 2]",
    "null": b"null",
    "an empty object": b"{}",
    "right keys, wrong values": WRONG_VALUES.encode(),
    "not text": b"\xff\xfe\x00garbage",
}


@pytest.mark.parametrize("content", NOT_TRACES.values(), ids=NOT_TRACES.keys())
def test_a_file_that_is_not_a_trace_is_refused_and_the_session_keeps_its_run(session, tmp_path, content):
    path = tmp_path / "trace.json"
    path.write_bytes(content)
    live = len(STORE)
    load = lambda *args: teach(h.load_trace)(*args[:2], page(KNOBS))  # noqa: E731
    assert_teaches(lambda: load(session, str(path), MODES[0], "transformers"), "not a Decoding Lab trace")
    assert len(STORE) == live  # nothing half-loaded was left behind
    assert_usable(session)


@pytest.mark.parametrize("value", [None, float("nan"), float("inf"), "warm", True, 5.5, -0.1])
def test_a_number_out_of_its_range_names_the_control_the_range_and_the_value(value):
    with pytest.raises(ValueError) as info:
        values.number("temperature", value, 0.0, 5.0, "between 0 (greedy) and 5")
    said = "an empty box" if value is None else repr(value)  # a cleared box sends None, said in words
    assert str(info.value) == f"temperature must be between 0 (greedy) and 5, got {said}"


def test_a_number_in_range_comes_back_as_a_float():
    assert values.number("top-p", "0.5", 0.01, 1.0, "between 0.01 and 1") == 0.5


def test_nothing_ticked_and_a_cleared_box_are_said_in_words_not_python():
    with pytest.raises(ValueError, match=r"tick at least one of 2, 4, 8, got nothing ticked$"):
        values.picked("batch sizes", [], [2, 4, 8])
    assert values.short("  ") == values.short(None) == "an empty box" and values.short([1]) == "[1]"


@pytest.mark.parametrize("ticked", [None, [], [2, 3], ["x"]])
def test_a_checkbox_group_needs_one_allowed_box_ticked(ticked):
    with pytest.raises(ValueError, match=r"batch sizes: tick at least one of 2, 4, 8, got"):
        values.picked("batch sizes", ticked, [2, 4, 8])
    assert values.picked("batch sizes", [8, 2], [2, 4, 8]) == [8, 2]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), 5.5])
def test_a_whole_number_box_lets_nan_reach_the_check_that_names_the_box(bad):
    if bad != 5.5:
        with pytest.raises((ValueError, OverflowError)):  # gr.Number's own rounding: gradio's bare "Error"
            gr.Number(0, precision=0).preprocess(bad)
    value = validate.whole_number_box(0, label="Seed").preprocess(bad)
    assert_teaches(lambda: teach(values.whole)("seed", value, 0, 2**32 - 1), "seed", "[0, 4294967295]", "got ")


def test_a_whole_number_box_passes_whole_numbers_and_a_cleared_box_through():
    box = validate.whole_number_box(0)
    assert box.preprocess(5) == 5 and box.preprocess(None) is None


def test_a_knob_slider_lets_an_out_of_range_typed_value_reach_the_check_that_names_it():
    with pytest.raises(gr.Error, match="greater than maximum"):  # gradio's own slider: no control named
        gr.Slider(0.01, 1, 1.0).preprocess(5)
    assert validate.knob_slider(0.01, 1, 1.0).preprocess(5) == 5
    assert_teaches(lambda: teach(settings_from)(knobs(top_p=5)), "Top-p", "got 5")


def test_step_back_or_run_before_any_prefill_say_press_prefill_first(tiny):
    for call in (lambda: step(None), lambda: teach(h.back)(None, page(knobs()))):
        assert_teaches(call, "Press Prefill first")


def test_the_pages_rule_for_a_bad_value_is_one_script_in_the_head_of_the_app():
    # the browser test (tests/e2e/test_bad_input_e2e.py) checks what it does; here, that the app carries it once
    source = (Path(__file__).parents[2] / "app.py").read_text()
    assert source.count("VALIDATE_HEAD") == 2 and source.count("VALIDATE_CSS") == 2
    assert f"<script>{validate.JS}</script>" == validate.HEAD and validate.BESIDE in validate.JS
    assert "is above its largest value" in validate.JS and "is below its smallest value" in validate.JS
