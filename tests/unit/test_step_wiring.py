"""The step tab's clicks as the page sends them, on the tiny model: one event answers the chart and the panels below
it (no second event follows a Prefill or a Step), and the panels are those of the run the click made or moved."""

from tests.helpers.step_knobs import CONFIG, KNOBS
from tests.helpers.wiring import page, wired
from ui.context import RAW
from ui.sessions import STORE
from ui.step import tab
from visuals.distribution import MODES


def pressed(demo, c, button, given=None):
    """Press `button` through the handler the page runs, its inputs read by component (`given`, else their values)."""
    fn = wired(demo, button)
    event = next(f for f in demo.fns.values() if f.fn is fn)
    values = {c.model: CONFIG.model_id, c.prompt: "hello", c.template: RAW, c.seed: 0, c.max_new: 6, c.stops: ""}
    values |= {c.mode: MODES[0], c.run_id: None, c.alone: False, c.lens.is_open: False, c.strategies_open: True}
    values |= {getattr(c.knobs, name): value for name, value in KNOBS.items()} | (given or {})
    return fn(*[values.get(x, x.value) for x in event.inputs]), event


def test_prefill_and_step_answer_the_chart_and_the_panels_in_one_event(tiny, monkeypatch):
    panels_of = []
    real = tab.side_panels

    def seen(run_id, knobs, strategies_open=True):
        panels_of.append(run_id)
        return real(run_id, knobs, strategies_open)

    monkeypatch.setattr(tab, "side_panels", seen)  # before the page is wired: its events call this one
    demo, c = page(tab, CONFIG)
    answer, event = pressed(demo, c, c.buttons.prefill)
    run_id = answer[c.run_id]
    assert STORE.get(run_id).run is not None
    assert panels_of == [run_id]  # the new run's panels, not those of the run the page held before
    assert set(c.side) <= set(event.outputs) and set(c.side) <= set(answer)
    answer, event = pressed(demo, c, c.buttons.step, {c.run_id: run_id})
    assert len(STORE.get(run_id).trace.steps) == 1 and panels_of == [run_id, run_id]
    assert set(c.side) <= set(event.outputs)
    # the page sends nothing after either click: no `.then` follows them
    after = {d.get("trigger_after") for d in demo.config["dependencies"]}
    ids = {i for i, f in demo.fns.items() if f.fn in (wired(demo, c.buttons.prefill), wired(demo, c.buttons.step))}
    assert not ids & after


def test_a_bad_knob_is_said_in_the_message_line_and_the_panels_keep_their_look(tiny):
    demo, c = page(tab, CONFIG)
    run_id = pressed(demo, c, c.buttons.prefill)[0][c.run_id]
    answer, _ = pressed(demo, c, c.buttons.step, {c.run_id: run_id, c.knobs.top_p: 1.5})
    assert "Top-p must be between 0.01 and 1" in answer[c.message] and "got 1.5" in answer[c.message]
    assert not set(c.side) & set(answer)  # nothing computed for them: they stay as they were
