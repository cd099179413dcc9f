"""The speculative tab's handlers on the tiny model: a run lives on the server, steps round by round, goes back and
resets; bad K or L gets a message naming the control and its range, and the session stays usable."""

import pytest

from decoding.speculative.run import SpecRun
from ui import speculative_handlers as h
from ui.context import AppConfig
from ui.events import teach

CONFIG = AppConfig("tiny-random", "cpu")
LOOKUP, EARLY = "prompt lookup", "early exit (first L layers)"
# prompt, format, source, K, L, max new, temperature, top-k, top-p, repetition penalty, order, seed
CONTROLS = ["abcabcabc abcabc abc", "raw text", LOOKUP, 4, 1, 24, 0.0, 0, 1.0, 1.0, "transformers", 0]


def controls(**changes):
    names = ["prompt", "format", "source", "k", "layer", "max_new", "t", "top_k", "top_p", "penalty", "order", "seed"]
    return [changes.get(n, v) for n, v in zip(names, CONTROLS)]


def quiet(*a, **k):
    return None


def test_rounds_back_and_reset_across_rounds(tiny):
    out = h.prefill(CONFIG, None, *controls())
    sid = out[0]
    assert "Prefilled" in out[1]
    statuses = [h.step(CONFIG, sid, *controls())[1] for _ in range(3)]
    assert [s.split(".")[0] for s in statuses] == ["**Round 1", "**Round 2", "**Round 3"]
    spec = h.RUNS.get(sid)
    third, ids_after_two = spec.run.rounds[2], spec.run.ids[: spec.run.rounds[2].context_len]
    out = h.back(CONFIG, sid)
    assert out[1].startswith("**Round 2") and spec.run.ids == ids_after_two
    assert len(spec.context) == len(spec.run.ids)
    again = h.step(CONFIG, sid, *controls())
    replay = spec.run.rounds[2]
    assert again[1].startswith("**Round 3") and (replay.drafted, replay.kept) == (third.drafted, third.kept)
    blank = h.reset(sid)
    assert blank[0] is None and h.RUNS.get(sid) is None
    with pytest.raises(ValueError, match="press Prefill"):
        h.back(CONFIG, sid)


def test_run_to_end_equals_the_engine_and_reports_the_side_by_side_timing(tiny):
    sid, *_ = h.prefill(CONFIG, None, *controls(source=EARLY, k=3))
    out = h.run_to_end(CONFIG, sid, *controls(source=EARLY, k=3), progress=quiet)
    spec = h.RUNS.get(sid)
    engine = SpecRun(tiny, list(spec.key[1]), spec.run.settings, source="early-exit", draft_tokens=3, exit_layer=1,
                     max_new_tokens=24).run_to_end()  # fmt: skip
    assert spec.run.result.token_ids == engine.token_ids
    assert "same tokens" in out[8] and "float32 on cpu" in out[8]
    assert out[7].data and spec.comparison.identical
    h.reset(sid)


def test_changing_a_control_starts_a_new_run():
    sid, *_ = h.prefill(CONFIG, None, *controls())
    h.step(CONFIG, sid, *controls())
    first = h.RUNS.get(sid)
    h.step(CONFIG, sid, *controls(k=2))
    assert h.RUNS.get(sid) is not first and len(h.RUNS.get(sid).run.rounds) == 1
    h.reset(sid)


@pytest.mark.parametrize(("change", "message"), [
    ({"k": 0}, r"draft tokens K must be a whole number in \[1, 12\], got 0"),
    ({"k": -3}, r"draft tokens K must be a whole number in \[1, 12\], got -3"),
    ({"k": 2.5}, r"draft tokens K must be a whole number in \[1, 12\], got 2.5"),
    ({"k": None}, r"draft tokens K must be a whole number in \[1, 12\], got None"),
    ({"source": EARLY, "layer": 0}, r"exit layer L must be a whole number in \[1, 1\] \(the model has 2 layers\)"),
    ({"source": EARLY, "layer": -1}, r"exit layer L must be a whole number in \[1, 1\]"),
    ({"source": EARLY, "layer": 2}, r"exit layer L must be a whole number in \[1, 1\]"),
])  # fmt: skip
def test_bad_k_or_l_names_the_control_and_range_and_the_session_stays_usable(change, message):
    sid, *_ = h.prefill(CONFIG, None, *controls())
    h.step(CONFIG, sid, *controls())
    with pytest.raises(Exception, match=message):  # gr.Error in the browser, via ui.events.teach
        teach(h.step)(CONFIG, sid, *controls(**change))
    out = h.step(CONFIG, sid, *controls())
    assert out[1].startswith("**Round 2")
    h.reset(sid)


def test_the_exit_layer_is_not_checked_for_prompt_lookup():
    sid, *_ = h.prefill(CONFIG, None, *controls(layer=99))
    assert h.RUNS.get(sid).run.draft is None
    h.reset(sid)


def test_a_prompt_longer_than_the_tabs_limit_is_refused_with_its_size(monkeypatch):
    monkeypatch.setattr(h, "MAX_PROMPT_TOKENS", 10)  # the tiny model's context is shorter than the real limit
    with pytest.raises(ValueError, match=r"the prompt is 20 tokens; this tab takes up to 10"):
        h.prefill(CONFIG, None, *controls())
