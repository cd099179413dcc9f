"""The step tab's handlers on the tiny model: settings apply from the next step, Back trims, forcing branches,
a saved trace replays without a model, and bad values reach the browser as messages naming the range."""

import threading

import gradio as gr
import pytest

from decoding.models import TINY
from decoding.passes import Pass
from decoding.recent import Recent
from decoding.watch import OverLimit
from tests.helpers.step_knobs import CONFIG, KNOBS, page
from tests.helpers.step_view import changed, ops
from ui.context import RAW
from ui.events import teach
from ui.running import END
from ui.sessions import STORE
from ui.step import handlers as h


def start(knobs=KNOBS, max_new=6):
    return h.prefill(CONFIG, None, TINY, "hello", RAW, 0, max_new, "", page(knobs)).run_id


def test_step_then_back_returns_to_the_same_tokens(tiny):
    run_id = start()
    h.step(run_id, page(KNOBS))
    h.step(run_id, page(KNOBS))
    first = list(STORE.get(run_id).trace.token_ids)
    h.back(run_id, page(KNOBS))
    assert STORE.get(run_id).trace.token_ids == first[:1]
    h.step(run_id, page(KNOBS))
    assert STORE.get(run_id).trace.token_ids == first  # the seeded draw is replayed


def test_settings_apply_from_the_next_step(tiny):
    run_id = start()
    h.step(run_id, page(KNOBS))
    greedy = {**KNOBS, "temperature": 0.0}
    h.step(run_id, page(greedy))
    steps = STORE.get(run_id).trace.steps
    assert steps[0].settings["temperature"] == 1.0 and steps[1].settings["temperature"] == 0.0


def test_forcing_on_a_chosen_step_replaces_that_choice(tiny):
    run_id = start()
    h.step(run_id, page(KNOBS))
    h.force(run_id, 65, page(KNOBS))
    steps = STORE.get(run_id).trace.steps
    assert len(steps) == 1 and steps[0].token_id == 65 and steps[0].forced


def test_a_saved_trace_replays_without_a_model(tiny):
    run_id = start()
    for _ in h.run_to_end(run_id, page(KNOBS)):
        pass
    json_path, csv_path = h.save_trace(run_id)
    replay_id = h.load_trace(None, json_path, page(KNOBS)).run_id
    entry = STORE.get(replay_id)
    assert entry.run is None and entry.trace.token_ids == STORE.get(run_id).trace.token_ids
    h.back(replay_id, page(KNOBS))
    assert entry.view.cursor == len(entry.trace.steps) - 1
    with open(csv_path) as f:
        assert f.read().startswith("index,")


@pytest.mark.parametrize(
    "knobs, message",
    [
        ({**KNOBS, "temperature": -1.0}, r"Temperature must be 0 \(greedy\) or between 0.01 and 3, got -1.0"),
        ({**KNOBS, "top_k": 2.5}, r"Top-k must be a whole number in \[0, 200\]"),
        ({**KNOBS, "top_p": 5}, r"Top-p must be between 0.01 and 1 \(1 = off\), got 5"),
    ],
)
def test_bad_values_become_messages_naming_the_range(tiny, knobs, message):
    with pytest.raises(gr.Error, match=message):
        teach(h.prefill)(CONFIG, None, TINY, "hello", RAW, 0, 6, "", page(knobs))


def test_max_new_tokens_out_of_range_is_refused(tiny):
    with pytest.raises(gr.Error, match=r"Max new tokens must be a whole number in \[1, 4096\], got 0"):
        teach(h.prefill)(CONFIG, None, TINY, "hello", RAW, 0, 0, "", page(KNOBS))


def test_step_without_a_run_says_to_prefill():
    with pytest.raises(gr.Error, match="press Prefill"):
        teach(h.step)("no-such-run", page(KNOBS))


@pytest.mark.parametrize("before", [Pass(ms=1.0, rows=2, mode="packed"), Pass(ms=1.0, rows=1, mode="solo")])
def test_run_my_steps_alone_takes_effect_on_the_very_next_step(tiny, before):
    """Whether the shown distribution came from a shared pass or from a tick that happened to hold only this session,
    the Step after the tick says "alone, as you asked": its choice comes from a pass that was kept alone."""
    run_id = start()
    h.step(run_id, page(KNOBS))
    run = STORE.get(run_id).run
    if run.scheduler is None:
        pytest.skip("this server runs without the shared scheduler: every pass is its own")
    run.last_pass = before  # the pass behind the distribution on screen
    h.set_alone(run_id, True)
    h.step(run_id, page(KNOBS))
    step = STORE.get(run_id).trace.steps[-1]
    assert step.pass_mode == "alone" and step.rows == 1  # this step's choice came from a pass of its own


@pytest.mark.parametrize(
    "knobs",
    [
        KNOBS,  # plain sampling: no stage at all
        {**KNOBS, "repetition_penalty": 1.3, "top_k": 20},  # a penalty the inspector shows, one filter every order runs
        {**KNOBS, "temperature": 0.0, "presence_penalty": 0.5},  # greedy
    ],
)
@pytest.mark.parametrize("on_screen", ["strategies", ""])
def test_a_step_runs_the_sampler_pipeline_once(tiny, monkeypatch, knobs, on_screen):
    """The inspectors (penalties moved, engine orders), the choice and each strategy alone all read the one processed
    distribution: one pipeline pass per distribution, whether "each strategy alone" is on screen or not (these
    settings run the same stages in every engine's order; an order that differs would run its own)."""
    from decoding import inspector, loop, pipeline, sandbox

    calls = []

    def counted(*args, **kwargs):
        calls.append(args[1])
        return pipeline.process(*args, **kwargs)

    for module in (loop, sandbox, inspector):
        monkeypatch.setattr(module, "process", counted)
    # results kept for other sessions (decoding.recent) start empty: an earlier test's run of this prompt is not read
    monkeypatch.setattr(loop, "_PROCESSED", Recent(loop.KEPT))
    monkeypatch.setattr(inspector, "_INSPECTED", Recent(inspector.KEPT))
    box = page(knobs, strategies_open=True, on_screen=on_screen)
    run_id = h.prefill(CONFIG, None, TINY, "hello", RAW, 0, 6, "", box).run_id
    assert len(calls) == 1  # Prefill: the first distribution's preview, inspectors and panel
    for n in range(2, 5):
        answer = h.step(run_id, box)
        # on screen, the panel processes the next distribution, and the Step that chooses from it reads that; off
        # screen, that Step processes it itself
        processed = n if on_screen else n - 1
        assert len(calls) == processed, f"{len(calls)} pipeline passes for {processed} distributions"
        # the panel is drawn in the click's own answer while it is on screen, and left as it is (gr.skip()) otherwise
        assert isinstance(answer.strategies, dict) is (on_screen == "")


def test_each_strategy_alone_is_drawn_in_the_clicks_answer_only_while_open_and_on_screen(tiny):
    run_id = start()
    shown = h.step(run_id, page(KNOBS, strategies_open=True, on_screen="strategies"))
    assert "lc-panels" in shown.strategies  # drawn
    for open_, on_screen in ((False, "strategies"), (True, ""), (False, "")):
        answer = h.step(run_id, page(KNOBS, strategies_open=open_, on_screen=on_screen))
        assert isinstance(answer.strategies, dict)  # gr.skip(): nothing computed, nothing sent
    # an API call (no page script to say what is on screen) gets what is open
    assert "lc-panels" in h.back(run_id, page(KNOBS, strategies_open=True, on_screen=None)).strategies


def test_a_panel_that_comes_on_screen_stale_is_drawn_for_the_chart_shown(tiny):
    run_id = start()
    answer = h.step(run_id, page(KNOBS, on_screen=""))  # the panel off screen: not drawn
    number = changed(answer.stage, "step-dist").split('data-view="')[1].split('"')[0]
    drawn = h.strategies_drawn(run_id, page(KNOBS))
    assert f'data-view="{number}"' in drawn and "lc-panels" in drawn


def test_a_step_is_one_answer_with_its_panels_and_sends_only_its_new_chip_and_column(tiny):
    run_id = start()
    h.step(run_id, page(KNOBS))
    second = h.step(run_id, page(KNOBS))
    assert second._fields == ("stage", "strategies", "lens", "below")  # one answer: four elements
    # one chip added (the text held back and the legend's note on bytes may change beside it), none re-sent
    added = [op for op in ops(second.stage, "step-chips") if op[1] == "#step-chips .chips"]
    assert [op[0] for op in added] == ["append"] and added[0][2].count('class="tok gen') == 1
    time = ops(second.below, "step-time")
    assert {op[0] for op in time} <= {"append", "attr", "html"}
    appended = [op for op in time if op[0] == "append"]
    assert len(appended) == 2 and appended[0][2].count('class="lc-col"') == 1  # one column, and its label
    back = h.back(run_id, page(KNOBS))
    assert ["drop", "#step-chips .chips", 1] in back.stage["ops"]


def test_reset_during_run_to_end_stops_it_after_the_view_in_flight_with_no_error(tiny):
    run_id = start(max_new=20)
    run = h.run_to_end(run_id, page(KNOBS))
    assert next(run)._fields == ("stage", "strategies", "lens", "below")  # a view
    reset = threading.Thread(target=h.reset, args=(run_id,))
    reset.start()  # it waits: the run's first view is still in flight
    reset.join(0.3)
    assert reset.is_alive()
    assert list(run) == [END]  # asked for its next view, the run ends on nothing to draw, not an error
    reset.join(5)
    assert not reset.is_alive()


def test_a_new_prefill_stops_the_old_runs_run_to_end(tiny):
    run_id = start(max_new=20)
    run = h.run_to_end(run_id, page(KNOBS))
    next(run)
    run.close()  # gradio asked for the next view and the run let go of its lock there: the Prefill need not wait
    old = STORE.get(run_id)
    start_again = h.prefill(CONFIG, run_id, TINY, "hello", RAW, 0, 6, "", page(KNOBS))
    assert old.running.stopped and start_again.run_id != run_id


def test_run_to_end_on_a_finished_run_keeps_no_lock_between_the_threads_that_ask_for_its_views(tiny):
    """gradio asks a sync generator for each view in whichever of its worker threads is free (anyio's pool): Run to
    end pressed again on a finished run draws the run as it is, then ends, however the asks fall on threads, and
    leaves the run free for the page's next click. (Its view was once yielded with the run's RLock held: the end,
    asked for in another thread, could not release it, and every later click of that page waited for it.)"""
    run_id = start()
    for _ in h.run_to_end(run_id, page(KNOBS)):
        pass
    again = h.run_to_end(run_id, page(KNOBS))
    asked, answered, over = [], threading.Semaphore(0), threading.Event()

    def ask():
        try:
            asked.append(next(again, "ended"))
        except Exception as err:  # noqa: BLE001 - said in the assertion below
            asked.append(err)
        answered.release()
        over.wait(10)  # a pool's thread lives on (one that ended could lend its id to the next thread)

    # each ask in a thread of its own, as when gradio's pool hands the next ask to another of its threads
    workers = [threading.Thread(target=ask) for _ in range(2)]
    for worker in workers:
        worker.start()
        answered.acquire(timeout=10)
    over.set()
    assert asked[0]._fields == ("stage", "strategies", "lens", "below") and asked[1] == "ended", asked
    lock = STORE.get(run_id).lock
    assert lock.acquire(timeout=1), "the run is still held: a Step or a knob's redraw would wait for it forever"
    lock.release()


def test_the_static_path_writes_eagers_tokens_and_its_steps_say_which_step_ran(tiny):
    """Decode step "static" (the Step tab's radio): a static cache's step, its passes its own, captured as a CUDA graph
    only where one can be (uncaptured here, on the CPU); greedy writes the eager path's tokens, and each step's record
    names the path that ran, as the line under the chart does."""
    greedy = {**KNOBS, "temperature": 0.0}
    ids = {}
    for path in ("eager", "static"):
        run_id = h.prefill(CONFIG, None, TINY, "hello", RAW, 0, 6, "", page(greedy), path=path).run_id
        for _ in range(4):
            h.step(run_id, page(greedy))
        trace = STORE.get(run_id).trace
        ids[path] = list(trace.token_ids)
        # the first token's distribution came from the prompt's pass (eager onto either cache), the others from
        # the one-token step of the path
        kinds = [s.pass_kind for s in trace.steps]
        assert kinds == ["eager"] + ["eager" if path == "eager" else "static"] * 3, kinds
    assert ids["static"] == ids["eager"]


def test_an_unknown_decode_step_is_refused_naming_the_choices(tiny):
    with pytest.raises(gr.Error, match=r"Decode step must be one of 'eager', 'static', got 'graph'"):
        teach(h.prefill)(CONFIG, None, TINY, "hello", RAW, 0, 6, "", page(KNOBS), path="graph")


def test_run_to_end_past_the_request_limit_says_so_and_keeps_its_steps(tiny, monkeypatch):
    from ui import events

    run_id = start(max_new=6)
    monkeypatch.setattr(events, "REQUEST_S", 0.0)
    shown = []
    with pytest.raises(OverLimit, match=r"may run for at most 0 s.*DECODING_LAB_REQUEST_S|DECODING_LAB_REQUEST_S"):
        for answer in h.run_to_end(run_id, page(KNOBS)):
            shown.append(answer)
    assert shown  # the view of the steps taken was sent before the message
    taken = len(STORE.get(run_id).trace.steps)
    assert 1 <= taken < 6
    monkeypatch.setattr(events, "REQUEST_S", 300.0)
    h.step(run_id, page(KNOBS))  # the run is whole: the next Step goes on from there
    assert len(STORE.get(run_id).trace.steps) == taken + 1
