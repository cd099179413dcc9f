"""An upgrade test: every private part of gradio, FastAPI, Starlette or pytest-xdist that a workaround relies on, read
from the installed packages. Each failure names the workaround (its module in ui/kit, or tests/helpers/lanes.py;
docs/architecture.md's table of workarounds says what it buys and what to check); the workaround's own tests check
what it does. Every module of the kit has a check here (`test_every_module_of_the_kit_has_an_upgrade_check`)."""

import contextvars
import inspect
import re
from pathlib import Path

import gradio as gr
import pytest
from gradio import blocks, components, queueing, state_holder
from gradio.context import LocalContext
from xdist.scheduler import LoadScopeScheduling

from tests.helpers.lanes import Lanes
from ui import kit, validate
from ui.kit import (
    analytics,
    charts,
    direct_route,
    navbar,
    page_start,
    queue_wake,
    request,
    session_state,
    skips,
    slider,
)

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
    for name in ("sleep_when_free", "progress_update_sleep_when_free", "push", "process_events", "active_jobs"):
        assert hasattr(queue, name), _broken(queue_wake, f"the queue has no {name}")
    assert len(queue) == 0, _broken(queue_wake, "the queue's length is no longer its waiting events")
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
    for name in ("_update_config", "_update_value_in_config", "__setitem__"):  # each overridden by the lazy one
        assert callable(getattr(gradios, name, None)), _broken(session_state, f"no SessionState.{name}")
    assert isinstance(vars(gradios).get("components"), property), _broken(session_state, "components is no property")
    assert callable(getattr(blocks.BlocksConfig, "config_for_block", None)), _broken(
        session_state, "no BlocksConfig.config_for_block, which makes a block's copy"
    )
    assert "default_config" in vars(gr.Blocks()), _broken(session_state, "a Blocks has no default_config")


def test_gradio_still_passes_over_what_ui_skips_hands_it():
    assert components._Keywords.FINISHED_ITERATING, _broken(skips, "no components._Keywords.FINISHED_ITERATING")
    for name in ("convert_component_dict_to_list", "postprocess_update_dict"):
        assert callable(getattr(blocks, name, None)), _broken(skips, f"gradio.blocks has no {name}")
    fn_fields = _assigned(blocks.BlockFunction.__init__)
    assert {"is_validator_function", "batch", "outputs", "postprocess"} <= fn_fields, _broken(
        skips, "a BlockFunction no longer says whether it validates or batches, or its outputs"
    )
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
    takes = set(inspect.signature(endpoint).parameters)
    assert takes >= direct_route.ARGUMENTS, _broken(direct_route, f"gradio's predict takes {sorted(takes)}")
    assert hasattr(app, "auth") and hasattr(app, "auth_dependency"), _broken(direct_route, "the app's login is unknown")


def test_the_status_tracker_the_page_s_first_script_recognises_is_still_gradio_s():
    trackers = list(ASSETS.glob("statustracker-*.js"))
    assert trackers, _broken(page_start, "gradio's bundle has no statustracker module (its name is in the script)")
    assert "statustracker" in page_start.TRACKER_FRAMES
    assert any("requestAnimationFrame" in t.read_text() for t in trackers), _broken(
        page_start, "gradio's status tracker no longer asks for frames"
    )
    assert any('class="contain ' in b.read_text() for b in ASSETS.glob("Blocks-*.js")), _broken(
        page_start, "gradio's app is no longer drawn in a .contain element (how the script knows the app is there)"
    )
    with gr.Blocks() as demo:
        gr.Button()
    app = gr.routes.App.create_app(demo)
    assert any(getattr(r, "path", None) == "/" for r in app.router.routes), _broken(page_start, "no page route at /")


def test_gradio_s_plot_still_draws_through_plotly_react():
    plots = list(ASSETS.glob("PlotlyPlot-*.js"))
    assert plots and any(".react(" in p.read_text() for p in plots), _broken(
        charts, "gradio's Plot no longer calls Plotly.react, which the page's script defers"
    )
    assert any("window.Plotly=" in p.read_text() for p in plots), _broken(
        charts, "gradio's Plot no longer sets window.Plotly, where the page's script takes it"
    )


def test_gradio_still_draws_its_navbar_in_the_class_ui_kit_navbar_hides():
    assert ".nav-holder" in navbar.HEAD
    assert any("nav-holder" in c.read_text() for c in ASSETS.glob("core-*.css")), _broken(
        navbar, "gradio's stylesheet has no .nav-holder, the navbar's band the app hides"
    )


def test_gradio_still_sets_the_request_ui_kit_request_reads():
    assert isinstance(getattr(LocalContext, "request", None), contextvars.ContextVar), _broken(
        request, "gradio.context.LocalContext.request is no context variable"
    )
    sets = [p.name for p in Path(gr.__file__).parent.glob("*.py") if "LocalContext.request.set(" in p.read_text()]
    assert sets, _broken(request, "gradio no longer sets LocalContext.request around a handler")


def test_a_slider_still_refuses_a_typed_value_out_of_range_unless_the_knob_lets_it_through():
    with pytest.raises(Exception, match="5"):
        gr.Slider(0, 1).preprocess(5)  # if gradio stops refusing it, knob_slider's override can go
    assert validate.knob_slider(0, 1).preprocess(5) == 5, _broken(slider, "the knob's slider refused it")
    assert "preprocess" in vars(gr.Slider), _broken(slider, "gr.Slider no longer has its own preprocess")


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


def test_every_module_of_the_kit_has_an_upgrade_check():
    """A new workaround in ui/kit gets its check here: each module is named by a failure message above."""
    source = inspect.getsource(inspect.getmodule(test_every_module_of_the_kit_has_an_upgrade_check))
    modules = {p.stem for p in Path(kit.__file__).parent.glob("*.py")} - {"__init__", "switch"}
    unchecked = modules - set(re.findall(r"_broken\(\s*(\w+),", source))
    assert unchecked == set(), f"ui/kit modules with no upgrade check: {sorted(unchecked)}"
