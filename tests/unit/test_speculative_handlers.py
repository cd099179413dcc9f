"""The speculative tab's handlers on the tiny model: a run lives on the server, steps round by round, goes back and
resets; a bad K, L, seed or top-k gets a message naming the control and its range in the tab's message line, and
the session stays usable."""

import dataclasses
import html
import re

import pytest

from decoding.speculative.run import SpecRun
from tests.helpers.charts import read_chart
from tests.helpers.wiring import page, wired
from ui.context import AppConfig
from ui.events import teach
from ui.speculative import handlers as h
from ui.speculative import tab
from visuals.speculative.charts import TIMELINE_NAMES
from visuals.speculative.views import ROUND_SLOTS

CONFIG = AppConfig("tiny-random", "cpu")
LOOKUP, EARLY = "prompt lookup", "early exit (first L layers)"
KNOBS = {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "repetition_penalty": 1.0, "order": "transformers"}
CONTROLS = h.Controls(
    prompt="abcabcabc abcabc abc", template="raw text", source=LOOKUP, k=4, layer=1, max_new=24, seed=0, knobs=KNOBS
)


def controls(**changes) -> h.Controls:
    """The test's controls with some changed; a sampler knob is changed by its SamplerSettings field name."""
    knobs = {**KNOBS, **{name: v for name, v in changes.items() if name in KNOBS}}
    rest = {name: v for name, v in changes.items() if name not in KNOBS}
    return dataclasses.replace(CONTROLS, knobs=knobs, **rest)


def quiet(*a, **k):
    return None


def shown(sid, part: str = "round"):
    """What the page shows of the session's round or run view: the Parts it was last sent (ui/patch.py)."""
    return getattr(h.RUNS.get(sid), f"{part}_view").sent


def status(sid) -> str:
    return shown(sid).slots["#speculative-status"]


def test_rounds_back_and_reset_across_rounds(tiny):
    sid = h.prefill(CONFIG, None, controls()).sid
    assert "Prefilled" in status(sid)
    statuses = []
    for _ in range(3):
        h.step(CONFIG, sid, controls())
        statuses.append(status(sid))
    assert [s.split(".")[0] for s in statuses] == ["<b>Round 1", "<b>Round 2", "<b>Round 3"]
    spec = h.RUNS.get(sid)
    third, ids_after_two = spec.run.rounds[2], spec.run.ids[: spec.run.rounds[2].context_len]
    h.back(CONFIG, sid)
    assert status(sid).startswith("<b>Round 2") and spec.run.ids == ids_after_two
    assert len(spec.context) == len(spec.run.ids)
    h.step(CONFIG, sid, controls())
    replay = spec.run.rounds[2]
    assert status(sid).startswith("<b>Round 3") and (replay.drafted, replay.kept) == (third.drafted, third.kept)
    blank = h.reset(sid)
    assert blank.sid is None and h.RUNS.get(sid) is None
    with pytest.raises(ValueError, match="press Prefill"):
        h.back(CONFIG, sid)


def test_run_to_end_equals_the_engine_and_reports_the_side_by_side_timing(tiny):
    sid = h.prefill(CONFIG, None, controls(source=EARLY, k=3)).sid
    out = h.run_to_end(CONFIG, sid, controls(source=EARLY, k=3), progress=quiet)
    spec = h.RUNS.get(sid)
    engine = SpecRun(
        tiny,
        list(spec.key.ids),
        spec.run.settings,
        source="early-exit",
        draft_tokens=3,
        exit_layer=1,
        max_new_tokens=24,
    ).run_to_end()
    assert spec.run.result.token_ids == engine.token_ids
    run = shown(sid, "run")
    speed = run.slots["#speculative-speed"]
    assert "same tokens" in speed and "float32 on cpu" in speed
    timeline = read_chart(run.slots["#speculative-timeline"])
    assert timeline.names == [*TIMELINE_NAMES.values()] and spec.comparison.identical
    assert "html" in out.run  # a new run's first answer: the whole view
    h.reset(sid)


def test_a_round_sends_the_run_chart_its_one_new_column_and_back_drops_it(tiny):
    sid = h.prefill(CONFIG, None, controls()).sid
    first = h.step(CONFIG, sid, controls())
    assert "ops" in first.round and "html" in first.run  # the first round gives the run view its charts: whole
    second = h.step(CONFIG, sid, controls())
    appended = [op for op in second.run["ops"] if op[0] == "append"]
    assert [op[1] for op in appended] == ["#speculative-rounds .lc-cols", "#speculative-rounds .lc-x"]
    assert read_chart(appended[0][2]).series("guesses kept").x == ["2"]  # round 2's column alone
    assert {op[1] for op in second.round["ops"]} <= {f"#speculative-{name}" for name in ROUND_SLOTS}
    back = h.back(CONFIG, sid)
    assert ["drop", "#speculative-rounds .lc-cols", 1] in back.run["ops"]
    h.reset(sid)


def test_a_view_that_missed_a_change_gets_the_whole_of_what_was_last_sent(tiny):
    sid = h.prefill(CONFIG, None, controls()).sid
    h.step(CONFIG, sid, controls())
    again = h.whole(sid, "run")
    assert again["html"] == shown(sid, "run").html
    h.reset(sid)
    assert h.whole(sid, "round") == h.blank().round  # a freed run: the blank view


def test_changing_a_control_starts_a_new_run():
    sid = h.prefill(CONFIG, None, controls()).sid
    h.step(CONFIG, sid, controls())
    first = h.RUNS.get(sid)
    h.step(CONFIG, sid, controls(k=2))
    assert h.RUNS.get(sid) is not first and len(h.RUNS.get(sid).run.rounds) == 1
    h.reset(sid)


BAD = [
    ({"k": 0}, r"Draft tokens K (1-12) must be a whole number in [1, 12], got 0"),
    ({"k": -3}, r"Draft tokens K (1-12) must be a whole number in [1, 12], got -3"),
    ({"k": 2.5}, r"Draft tokens K (1-12) must be a whole number in [1, 12], got 2.5"),
    ({"k": None}, r"Draft tokens K (1-12) must be a whole number in [1, 12], got an empty box"),
    ({"source": EARLY, "layer": 0}, r"Exit layer L (early exit) must be a whole number in [1, 1] (the model has 2"),
    ({"source": EARLY, "layer": -1}, r"Exit layer L (early exit) must be a whole number in [1, 1]"),
    ({"source": EARLY, "layer": 2}, r"Exit layer L (early exit) must be a whole number in [1, 1]"),
    ({"seed": -1}, r"Seed must be a whole number in [0, 4294967295], got -1"),
    ({"seed": 2**32}, r"Seed must be a whole number in [0, 4294967295], got 4294967296"),
    ({"top_k": -4}, r"Top-k must be a whole number in [0, 200] (0 = off), got -4"),
    ({"top_p": 5}, r"Top-p must be between 0.01 and 1 (1 = off), got 5"),
]


@pytest.mark.parametrize(("change", "said"), BAD)
def test_a_bad_value_is_said_in_the_message_line_naming_the_control_and_the_session_stays_usable(change, said):
    sid = h.prefill(CONFIG, None, controls()).sid
    h.step(CONFIG, sid, controls())
    out = teach(h.step, message="message line")(CONFIG, sid, controls(**change))
    assert list(out) == ["message line"]  # the other outputs keep what they show: no "Error" badge on each
    assert html.escape(said) in out["message line"] and "lab-error" in out["message line"]
    h.step(CONFIG, sid, controls())
    assert status(sid).startswith("<b>Round 2")
    h.reset(sid)


def test_the_exit_layer_is_not_checked_for_prompt_lookup():
    sid = h.prefill(CONFIG, None, controls(layer=99)).sid
    assert h.RUNS.get(sid).run.draft is None
    h.reset(sid)


def test_a_prompt_longer_than_the_tabs_limit_is_refused_with_its_size(monkeypatch):
    monkeypatch.setattr(h, "MAX_PROMPT_TOKENS", 10)  # the tiny model's context is shorter than the real limit
    with pytest.raises(ValueError, match=r"the prompt is 20 tokens; this tab takes up to 10"):
        h.prefill(CONFIG, None, controls())


def test_the_page_answers_each_output_by_its_component_and_a_bad_seed_in_the_message_line_alone():
    demo, c = page(tab, CONFIG)
    given = {
        c.sid: None,
        c.prompt: CONTROLS.prompt,
        c.template: CONTROLS.template,
        c.source: LOOKUP,
        c.k: 4,
        c.layer: 1,
        c.max_new: 24,
        c.seed: 0,
        **{getattr(c.knobs, f): v for f, v in KNOBS.items()},
    }
    out = wired(demo, c.prefill)(given)
    # the session id and the two views: three outputs and the message line, where there were ten and the line
    assert set(out) == {c.view.sid, c.view.round, c.view.run, c.message} and out[c.message] == ""
    sid = out[c.view.sid]
    assert "Prefilled" in status(sid) and "Prefilled" in out[c.view.round]["html"]
    bad = wired(demo, c.round)({**given, c.sid: sid, c.seed: -1})
    assert list(bad) == [c.message] and "Seed must be a whole number in [0, 4294967295], got -1" in bad[c.message]
    wired(demo, c.round)({**given, c.sid: sid})
    assert "Round 1" in status(sid)
    h.reset(sid)


def test_a_preset_sets_its_controls_by_name_and_an_unknown_one_changes_nothing():
    _, c = page(tab, CONFIG)
    early = tab.apply_preset(c, "Early exit: cheap, mostly wrong")
    assert early[c.source] == EARLY and early[c.k] == 3 and early[c.max_new] == 40 and c.seed not in early
    assert tab.apply_preset(c, "no such preset") == {}


def test_the_sampler_sliders_are_drawn_from_the_knobs_ranges():
    _, c = page(tab, CONFIG)
    for field in ("temperature", "top_p", "repetition_penalty"):
        slider, knob = getattr(c.knobs, field), tab.KNOBS[field]
        assert (slider.minimum, slider.maximum, slider.step, slider.label) == (knob.lo, knob.hi, knob.step, knob.label)
    # top-k is a box with no range of its own, so a typed -4 reaches the check that names it
    assert (c.knobs.top_k.minimum, c.knobs.top_k.maximum, c.knobs.top_k.label) == (None, None, "Top-k")


def test_stop_during_run_to_end_ends_it_between_two_rounds_and_says_how_soon(tiny):
    def pressed(*args, **kwargs):  # Stop pressed as the bar first says how far: one round taken, no more
        h.STOPS.cancel(None)

    sid = h.prefill(CONFIG, None, controls(max_new=48)).sid
    h.run_to_end(CONFIG, sid, controls(max_new=48), progress=pressed)
    spec = h.RUNS.get(sid)
    assert len(spec.run.rounds) == 1 and not spec.run.done and spec.comparison is None
    words = shown(sid).slots["#speculative-text"]
    took = float(re.search(r"<b>Stopped by you</b>, ([\d.]+) s after you pressed Stop", words).group(1))
    assert 0 <= took < 5 and "press Round or Run to end to go on" in words
    h.run_to_end(CONFIG, sid, controls(max_new=48), progress=quiet)  # a Run to end after it goes on to the timing
    assert spec.run.done and spec.comparison is not None
    assert "Stopped by you" not in shown(sid).slots["#speculative-text"]
    h.reset(sid)
