"""The step tab's lens panel on a tiny-model run: closed it reads nothing and draws nothing; open, every step reads
its lens before it chooses, the panel follows the chart, and Back and a new choice leave no stale lens behind."""

import gradio as gr

from decoding.models import TINY
from tests.test_step_view import CONFIG, GREEDY
from ui.context import RAW
from ui.sessions import STORE
from ui.step import handlers as h
from ui.step import lens
from ui.step import view as step_view
from visuals.distribution import MODES


def _prefill():
    return h.prefill(CONFIG, None, TINY, "hello", RAW, 0, 6, "", MODES[0], GREEDY).run_id


def test_closed_the_panel_reads_no_lens_and_redraws_nothing(tiny):
    run_id = _prefill()
    h.step(run_id, MODES[0], GREEDY)
    entry = STORE.get(run_id)
    assert entry.view.lenses == {}
    side = step_view.side_view(run_id, None)
    assert all(isinstance(x, type(gr.skip())) for x in (side.lens_summary, side.lens_table, side.lens_curve))
    STORE.release(run_id)


def test_open_every_step_reads_its_lens_and_the_panel_shows_the_charts_distribution(tiny):
    run_id = _prefill()
    shown = lens.opened(run_id, lambda: h.settings_changed(run_id, MODES[0], GREEDY))
    assert shown.run_id == run_id  # the chart redrawn from the lens pass's logits
    entry = STORE.get(run_id)
    for _ in range(3):
        h.step(run_id, MODES[0], GREEDY)
    panel = lens.side(entry)
    assert panel.table.count("<tr") == 4 and "layer 2 (final)" in panel.table  # header + embeddings + 2 layers
    chosen = entry.trace.steps[-1]
    assert f"data-id='{chosen.token_id}'" in panel.table.split("data-row='2'")[1]
    assert "over 3 steps" in panel.curve.layout["title"]["text"]
    STORE.release(run_id)


def test_back_and_a_new_choice_drop_the_lens_of_the_old_one(tiny):
    run_id = _prefill()
    lens.opened(run_id, lambda: h.settings_changed(run_id, MODES[0], GREEDY))
    h.step(run_id, MODES[0], GREEDY)
    h.step(run_id, MODES[0], GREEDY)
    h.back(run_id, MODES[0], GREEDY)
    h.back(run_id, MODES[0], GREEDY)
    lens.closed(run_id)
    h.force(run_id, 5, MODES[0], GREEDY)  # another first token, taken with the panel closed
    h.step(run_id, MODES[0], GREEDY)
    entry = STORE.get(run_id)
    assert lens._valid(entry, 1) is None and lens._valid(entry, 0) is not None  # step 1's context changed
    STORE.release(run_id)
