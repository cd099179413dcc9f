"""An upgrade test: every private part of gradio, FastAPI or pytest-xdist that a workaround relies on, read from the
installed packages. Each failure names the workaround (docs/architecture.md's table of workarounds says what it buys
and what to check); the workaround's own tests check what it does."""

import inspect
import re
from pathlib import Path

import gradio as gr
import pytest
from gradio import blocks, components, queueing, state_holder
from xdist.scheduler import LoadScopeScheduling

from tests.helpers.lanes import Lanes
from ui import validate
from ui.kit import analytics, direct_route, page_start, queue_wake, session_state, skips

ASSETS = Path(gr.__file__).parent / "templates" / "frontend" / "assets"


def _assigned(init) -> set[str]:
    """The attributes an `__init__` sets on self."""
    return set(re.findall(r"^\s*self\.(\w+)\s*(?::[^=]+)?=", inspect.getsource(init), re.M))


def _broken(workaround, what: str) -> str:
    return f"{workaround.__name__} ({Path(inspect.getfile(workaround)).name}): {what}"


def test_the_queue_still_sleeps_as_ui_queue_wake_wakes_it():
    demo = gr.Blocks()
    demo.queue()
    queue = getattr(demo, "_queue", None)
    assert isinstance(queue, queueing.Queue), _broken(queue_wake, "Blocks._queue is no longer gradio's Queue")
    for name in ("sleep_when_free", "progress_update_sleep_when_free", "push", "process_events"):
        assert hasattr(queue, name), _broken(queue_wake, f"the queue has no {name}")
    assert getattr(queueing, "asyncio", None) is not None, _broken(
        queue_wake, "gradio.queueing no longer imports asyncio"
    )
    source = inspect.getsource(queueing.Queue)
    for sleep in ("asyncio.sleep(self.sleep_when_free)", "asyncio.sleep(self.progress_update_sleep_when_free)"):
        assert sleep in source, _broken(queue_wake, f"the queue's loops no longer call {sleep}")


def test_a_session_state_still_has_the_fields_ui_session_state_makes():
    gradios = state_holder.SessionState
    assert list(inspect.signature(gradios.__init__).parameters) == ["self", "blocks"], _broken(
        session_state, "SessionState.__init__ takes other arguments"
    )
    missing = _assigned(gradios.__init__) - _assigned(session_state.LazySessionState.__init__)
    assert missing == set(), _broken(session_state, f"gradio's SessionState sets {sorted(missing)}, the lazy one not")
    assert callable(getattr(gradios, "_update_config", None)), _broken(session_state, "no SessionState._update_config")


def test_gradio_still_passes_over_what_ui_skips_hands_it():
    assert components._Keywords.FINISHED_ITERATING, _broken(skips, "no components._Keywords.FINISHED_ITERATING")
    for name in ("convert_component_dict_to_list", "postprocess_update_dict"):
        assert callable(getattr(blocks, name, None)), _broken(skips, f"gradio.blocks has no {name}")
    params = list(inspect.signature(blocks.Blocks.postprocess_data).parameters)
    assert params[:4] == ["self", "block_fn", "predictions", "state"], _broken(
        skips, f"Blocks.postprocess_data takes {params}"
    )


def test_the_direct_route_still_finds_gradios_predict_route():
    from fastapi import routing

    assert "original_router" in getattr(routing, "_IncludedRouter", object).__annotations__, _broken(
        direct_route, "FastAPI's _IncludedRouter.original_router is gone"
    )
    with gr.Blocks() as demo:
        gr.Button().click(lambda: None)
    app = gr.routes.App.create_app(demo)
    try:
        endpoint = direct_route.gradio_predict(app)
    except StopIteration:
        pytest.fail(_broken(direct_route, f"no APIRoute at {direct_route.PATH} among the app's routes"))
    assert endpoint.__name__ == "predict", _broken(direct_route, f"the endpoint at {direct_route.PATH} is {endpoint}")


def test_the_status_tracker_the_page_s_first_script_recognises_is_still_gradio_s():
    trackers = list(ASSETS.glob("statustracker-*.js"))
    assert trackers, _broken(page_start, "gradio's bundle has no statustracker module (its name is in the script)")
    assert "statustracker" in page_start.TRACKER_FRAMES
    assert any("requestAnimationFrame" in t.read_text() for t in trackers), _broken(
        page_start, "gradio's status tracker no longer asks for frames"
    )


def test_gradio_s_plot_still_draws_through_plotly_react():
    from ui.kit import charts

    plots = list(ASSETS.glob("PlotlyPlot-*.js"))
    assert plots and any(".react(" in p.read_text() for p in plots), _broken(
        charts, "gradio's Plot no longer calls Plotly.react, which the page's script defers"
    )


def test_a_slider_still_refuses_a_typed_value_out_of_range_unless_the_knob_lets_it_through():
    with pytest.raises(Exception, match="5"):
        gr.Slider(0, 1).preprocess(5)  # if gradio stops refusing it, knob_slider's override can go
    assert validate.knob_slider(0, 1).preprocess(5) == 5


def test_the_queue_still_rebuilds_its_analytics_as_often_as_ui_kit_analytics_says():
    queue = gr.Blocks().queue()._queue
    assert "ANAYLTICS_CACHE_FREQUENCY" in vars(queue), _broken(analytics, "the queue has no ANAYLTICS_CACHE_FREQUENCY")
    source = inspect.getsource(queueing.Queue)
    assert f'"{analytics.ENV}"' in source, _broken(analytics, f"gradio's queue no longer reads {analytics.ENV}")
    assert ">= self.ANAYLTICS_CACHE_FREQUENCY" in source, _broken(analytics, "the queue no longer reads its frequency")


def test_the_test_lanes_override_only_what_xdist_s_scope_scheduling_has():
    mine = [name for name in vars(Lanes) if name.startswith("_") and not name.startswith("__")]
    assert "_split_scope" in mine
    for name in mine:
        assert callable(getattr(LoadScopeScheduling, name, None)), (
            f"tests/helpers/lanes.py overrides {name}, which pytest-xdist's LoadScopeScheduling no longer has"
        )
