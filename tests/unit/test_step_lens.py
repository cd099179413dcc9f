"""The step tab's lens panel on a tiny-model run: closed it reads nothing and draws nothing; open, every step reads
its lens before it chooses, the panel follows the chart, and Back and a new choice leave no stale lens behind."""

import gradio as gr

from decoding.models import TINY
from tests.helpers.step import CONFIG, GREEDY
from tests.helpers.step_knobs import page
from tests.helpers.step_view import changed, sent
from ui.context import RAW
from ui.sessions import STORE
from ui.step import handlers as h
from ui.step import lens


def _prefill():
    return h.prefill(CONFIG, None, TINY, "hello", RAW, 0, 6, "", page(GREEDY)).run_id


def _opened(run_id):
    return h.lens_opened(run_id, page(GREEDY))


def test_closed_the_panel_reads_no_lens_and_redraws_nothing(tiny):
    run_id = _prefill()
    answer = h.step(run_id, page(GREEDY))
    entry = STORE.get(run_id)
    assert entry.view.pending.lens is None and all(r.lens is None for r in entry.view.records)
    assert answer.lens == gr.skip()  # a click's answer sends it nothing
    STORE.release(run_id)


def test_open_the_panel_is_drawn_as_it_opens_and_in_every_clicks_own_answer(tiny):
    run_id = _prefill()
    opened = _opened(run_id)
    assert "layer 2 (final)" in opened.lens  # in the answer of the event that opened it
    answer = h.step(run_id, page(GREEDY))  # one event: the step and its lens
    assert answer.lens == lens.side(STORE.get(run_id)) and "layer 2 (final)" in answer.lens
    STORE.release(run_id)


def test_open_every_step_reads_its_lens_and_the_panel_shows_the_charts_distribution(tiny):
    run_id = _prefill()
    shown = _opened(run_id)
    assert changed(shown.stage, "step-dist")  # the chart redrawn from the lens pass's logits
    entry = STORE.get(run_id)
    for _ in range(3):
        h.step(run_id, page(GREEDY))
    panel = lens.draw(entry)
    assert panel.table.count("<tr") == 4 and "layer 2 (final)" in panel.table  # header + embeddings + 2 layers
    chosen = entry.trace.steps[-1]
    assert f"data-id='{chosen.token_id}'" in panel.table.split("data-row='2'")[1]
    assert "over 3 steps" in panel.curve
    STORE.release(run_id)


def test_back_and_a_new_choice_drop_the_lens_of_the_old_one(tiny):
    run_id = _prefill()
    _opened(run_id)
    h.step(run_id, page(GREEDY))
    h.step(run_id, page(GREEDY))
    h.back(run_id, page(GREEDY))
    h.back(run_id, page(GREEDY))
    lens.closed(run_id)
    h.force(run_id, 5, page(GREEDY))  # another first token, taken with the panel closed
    h.step(run_id, page(GREEDY))
    entry = STORE.get(run_id)
    assert lens._valid(entry, 1) is None and lens._valid(entry, 0) is not None  # step 1's context changed
    STORE.release(run_id)


def test_a_step_taken_with_the_panel_open_reports_the_lens_pass_it_chose_from(tiny):
    run_id = _prefill()
    _opened(run_id)
    h.step(run_id, page(GREEDY))
    entry = STORE.get(run_id)
    step, seen = entry.trace.steps[-1], entry.view.records[0].lens.lens
    orders = sent(run_id)["step-orders"]
    assert step.pass_mode == "lens" and "behind this distribution:</strong> the lens pass" in orders
    assert 0 < step.forward_ms <= seen.ms  # that pass's own time, within what the panel cost
    STORE.release(run_id)


def _to_end(run_id):
    for _ in h.run_to_end(run_id, page(GREEDY)):
        pass


def test_when_the_run_stops_with_the_panel_open_the_curve_covers_every_step_from_one_pass(tiny):
    run_id = _prefill()
    h.step(run_id, page(GREEDY))  # taken with the panel closed: still counted once the run stops
    _opened(run_id)
    _to_end(run_id)
    entry = STORE.get(run_id)
    n = len(entry.trace.steps)
    panel = lens.draw(entry)
    assert f"over the whole run ({n} steps)" in panel.curve
    assert f"Over the whole run, {n} steps: one more pass" in panel.note and "100%: every written token" in panel.note
    whole = entry.view.whole
    _opened(run_id)
    assert entry.view.whole is whole  # read once per run
    h.back(run_id, page(GREEDY))  # another run now: the curve is the steps' own again
    assert lens.draw(entry).note == lens.CURVE_NOTE
    STORE.release(run_id)


def test_closed_the_panel_reads_no_curve_and_opening_it_on_a_stopped_run_reads_it(tiny):
    run_id = _prefill()
    _to_end(run_id)
    entry = STORE.get(run_id)
    assert entry.view.whole is None and all(r.lens is None for r in entry.view.records)
    with entry.lock:
        assert not lens.opened(entry)  # nothing pending to read
    assert entry.view.whole[1].steps == len(entry.trace.steps)
    assert "over the whole run" in lens.draw(entry).curve
    STORE.release(run_id)
