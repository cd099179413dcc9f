"""The page's config stays the page's: gradio deep-copies it on every page load, so nothing in it may reach the
server's runs (a bound method of a store would copy every student's run, model and KV cache with it)."""

import inspect

import gradio as gr
from starlette.routing import Match

from app import build_app
from ui.context import AppConfig
from ui.pages import OldLink, lesson_url
from ui.tabs import specs


def test_no_state_deletes_through_a_bound_method():
    demo = build_app(AppConfig("tiny-random", "cpu"))
    states = [b for b in demo.blocks.values() if isinstance(b, gr.State)]
    callbacks = [s.delete_callback for s in states if s.delete_callback is not None]
    assert callbacks, "the step and beam tabs free their runs when a page closes"
    assert not any(inspect.ismethod(cb) for cb in callbacks)


# every tab's id as shared links have carried it since links were first sent (?tab=beams), and the tab it opens now
OLD_LINKS = {
    "step": "step",
    "sandbox": "sandbox",
    "timing": "timing",
    "serving": "serving",
    "batching": "nondeterminism",  # renamed to its package's name; its old links still open it
    "beams": "beams",
    "speculative": "speculative",
    "constrained": "constrained",
    "quantization": "quantization",
}


def test_every_shared_link_id_still_opens_its_lesson_on_its_page_with_the_rest_of_its_query():
    """A lesson may be added or renamed, but a link already sent to a class opens the same lesson: the app's root
    with `?tab=<id>` answers with its page (ui.pages.OldLink), the query whole, its `tab` the lesson's id now (which
    the lesson's preset picker reads)."""
    for link_id, lesson in OLD_LINKS.items():
        assert lesson_url({"tab": link_id}) == f"{lesson}?tab={lesson}"
        assert lesson_url({"tab": link_id, "preset": "2-2", "notice": "beams-x"}) == (
            f"{lesson}?tab={lesson}&preset=2-2&notice=beams-x"
        )
    assert all(lesson_url({"tab": spec.id}) for spec in specs() if spec.id != "start")


def test_start_here_or_an_unknown_tab_id_stays_on_the_first_page():
    for query in ({"tab": "start"}, {"tab": "step_tab"}, {"tab": "ui.step.tab"}, {"tab": ""}, {}, {"projector": "1"}):
        assert lesson_url(query) is None, query


def test_the_old_link_route_answers_only_the_root_with_a_lesson_in_its_query():
    route = OldLink()
    scope = lambda path, query, method="GET": {  # noqa: E731
        "type": "http",
        "path": path,
        "query_string": query.encode(),
        "method": method,
        "headers": [],
    }
    assert route.matches(scope("/", "tab=batching&preset=x"))[0] == Match.FULL
    assert route.matches(scope("/", "tab=start"))[0] == Match.NONE
    assert route.matches(scope("/", ""))[0] == Match.NONE
    assert route.matches(scope("/step", "tab=step"))[0] == Match.NONE
    assert route.matches(scope("/", "tab=step", "POST"))[0] == Match.NONE
