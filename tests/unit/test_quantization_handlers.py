"""The quantization tab's handlers on the tiny model: a step answers every output by name, Back and Reset work, and a
bad format, step count, prompt or held-out length is said naming the control and what it allows."""

import threading

import pytest

from decoding.models import BUNDLED
from decoding.quantization.formats import FORMATS
from ui.context import AppConfig
from ui.quantization import handlers as h
from ui.quantization import measure as m
from ui.running import END

CONFIG = AppConfig("tiny-random", "cpu")
CONTROLS = h.Controls(prompt="hello world", template="raw text", fmt="int8", steps=3)


def stepped(sid, controls) -> h.View:
    """Step's one view (Step yields it, as Run yields each of its own, then END: ui.running)."""
    view, end = h.step(CONFIG, sid, controls)
    assert end is END
    return view


def status(sid) -> str:
    """The words of the side by side as the page shows them: the session's view as last sent (ui/patch.py)."""
    return h.RUNS.get(sid).sent.sent.slots["#quantization-status"]


def words(view: h.View) -> str:
    """The words of a whole view (a blank one, or the first of a run)."""
    shown = view.shown if isinstance(view.shown, str) else view.shown["html"]
    return shown.split("<div id='quantization-status'>", 1)[1].split("</div>", 1)[0]


def test_every_format_but_float32_is_offered_new_ones_included():
    assert [name for name in FORMATS if name != "float32"] == h.CHOICES == h.choices(BUNDLED)


def test_as_stored_is_offered_only_for_the_bundled_file_whose_weights_it_holds():
    assert "as stored" not in h.choices("gpt2") and "int4, head kept" in h.choices("gpt2")
    with pytest.raises(ValueError, match="Format must be one of 'bfloat16'.*got 'as stored'"):
        stepped(None, h.Controls(**{**CONTROLS.__dict__, "fmt": "as stored"}))


def test_a_step_run_back_and_reset_answer_the_whole_view():
    view = stepped(None, CONTROLS)
    sid = view.sid
    assert sid and "step 1" in status(sid) and "Same top-1 at" in status(sid)
    assert "html" in view.shown  # a new run's first view: whole
    shown = []
    run = h.run_n(CONFIG, sid, CONTROLS)
    for v in run:
        if v is END:
            break
        shown.append([n for n in (2, 3, 4) if f"step {n}" in status(sid)])
        # each view sent is the changes since the one before it: the new chips and KL columns, appended
        assert {op[0] for op in v.shown["ops"]} <= {"append", "html", "attr", "drop"}
    # each view one step, later than the one before (at most four views a second are sent: ui.running), the last always
    assert all(len(n) == 1 for n in shown) and all(a < b for a, b in zip(shown, shown[1:]))
    assert shown[-1] == [4]
    assert h.RUNS.get(sid).sent.sent.html.count("quantization-chip") == 8  # the streams grow as Run goes
    view = h.back(sid)
    assert "step 3" in status(sid) and ["drop", "#quantization-kl .lc-cols", 1] in view.shown["ops"]
    assert h.whole(sid)["html"] == h.RUNS.get(sid).sent.sent.html  # a page that missed a change gets it all
    assert h.reset(sid).sid is None
    with pytest.raises(ValueError, match="run is no longer on the server"):
        h.back(sid)


@pytest.mark.parametrize(
    "change, said",
    [
        (dict(fmt="int3"), "Format must be one of 'bfloat16', 'int8'"),
        (dict(fmt="float32"), "Format must be one of"),
        (dict(steps=0), r"Steps per Run \(1-64\)"),
        (dict(steps=2.5), r"Steps per Run \(1-64\)"),
        (dict(prompt="  "), "the prompt is empty: type some text for both formats to continue$"),
        (dict(part="norms"), "Rounded must be one of 'layers and head', 'layers only', 'head only', got 'norms'"),
    ],
)
def test_a_bad_value_names_the_control_and_its_range(change, said):
    controls = h.Controls(**{**CONTROLS.__dict__, **change})
    with pytest.raises(ValueError, match=said):
        list(h.run_n(CONFIG, None, controls))


def test_a_run_part_rounds_only_that_part_and_says_so():
    view = stepped(None, h.Controls(**{**CONTROLS.__dict__, "fmt": "int4", "part": "head only"}))
    assert status(view.sid).startswith("<b>int4 on the head only (simulated")


def test_a_new_format_clears_the_old_run_and_says_what_the_next_step_starts():
    sid = stepped(None, CONTROLS).sid
    view = h.changed(sid, "int4", "layers only")
    assert view.sid is None and "Now <b>int4</b>, on the layers only" in words(view)
    with pytest.raises(ValueError, match="run is no longer on the server"):
        h.back(sid)


def test_the_quality_box_and_the_formats_are_checked_before_anything_runs():
    with pytest.raises(ValueError, match=r"Held-out tokens to score.*-4"):
        m.score(CONFIG, ["int8"], ["head only"], -4, progress=lambda *a, **k: None)
    with pytest.raises(ValueError, match="Formats to score: tick at least one of bfloat16"):
        m.score(CONFIG, ["int3"], ["head only"], 16, progress=lambda *a, **k: None)


def test_nothing_ticked_clears_the_old_table_and_says_what_to_tick():
    said = m.score(CONFIG, [], ["head only"], 16, progress=lambda *a, **k: None)
    assert said.startswith("*Nothing to score: tick at least one box under **Formats to score**")


def test_the_quality_table_has_a_row_per_format_and_part_float32_first():
    table = m.score(CONFIG, ["int4"], ["layers only", "head only"], 16, progress=lambda *a, **k: None)
    rows = [line.split(" | ")[:2] for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows == [["| format", "rounded"], ["| float32", "–"], ["| int4", "layers only"], ["| int4", "head only"]]


def test_a_run_let_go_by_a_new_format_takes_no_more_steps():
    sid = stepped(None, CONTROLS).sid
    run = h.run_n(CONFIG, sid, CONTROLS)
    first = next(run)
    said = []
    change = threading.Thread(target=lambda: said.append(h.changed(sid, "int4", "layers and head")))
    change.start()  # let it go: it waits for the view in flight (gradio has not asked for the next one yet)
    for _ in range(500):
        if h.RUNS.get(sid) is None:
            break
        change.join(0.01)
    assert h.RUNS.get(sid) is None and not said  # let go, and waiting until the run's view is on its way
    # asked for the next view, the run stops, and ends on END: gradio's completion message sends a generator's
    # last value again after the change's answer, and it must draw nothing
    assert "step 2" in str(first.shown) and list(run) == [END]
    change.join()
    assert "Now <b>int4</b>" in words(said[0])


def test_try_this_says_where_things_are_as_the_page_draws_them():
    from ui.quantization.tab import TRY_THIS

    assert "under the chart" not in TRY_THIS and "Format **as stored**" in TRY_THIS and "**head only**" in TRY_THIS
