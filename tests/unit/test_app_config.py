"""The page's config stays the page's: gradio deep-copies it on every page load, so nothing in it may reach the
server's runs (a bound method of a store would copy every student's run, model and KV cache with it)."""

import inspect
from types import SimpleNamespace

import gradio as gr

from app import build_app, open_link
from ui.context import AppConfig
from ui.tabs import specs


def test_no_state_deletes_through_a_bound_method():
    demo = build_app(AppConfig("tiny-random", "cpu"))
    states = [b for b in demo.blocks.values() if isinstance(b, gr.State)]
    callbacks = [s.delete_callback for s in states if s.delete_callback is not None]
    assert callbacks, "the step and beam tabs free their runs when a page closes"
    assert not any(inspect.ismethod(cb) for cb in callbacks)


# every tab's id as shared links have carried it since links were first sent (?tab=beams), and the tab it opens now
OLD_LINKS = {
    "start": "start",
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


def selected_by(query: dict):
    tabs, _ = open_link(SimpleNamespace(query_params=query))
    return tabs.selected


def test_every_shared_link_id_still_opens_its_tab():
    """A tab may be added or renamed, but a link already sent to a class opens the same tab (a renamed tab keeps its
    old id in its spec's old_ids)."""
    assert {link_id: selected_by({"tab": link_id}) for link_id in OLD_LINKS} == OLD_LINKS
    for spec in specs():
        assert selected_by({"tab": spec.id}) == spec.id


def test_an_unknown_tab_id_selects_no_tab():
    for query in ({"tab": "step_tab"}, {"tab": "ui.step.tab"}, {"tab": ""}, {}):
        assert selected_by(query) == gr.skip()  # the page stays on the tab it opens with
