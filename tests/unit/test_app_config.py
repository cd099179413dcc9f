"""The page's config stays the page's: gradio deep-copies it on every page load, so nothing in it may reach the
server's runs (a bound method of a store would copy every student's run, model and KV cache with it)."""

import inspect
import json

import gradio as gr
from gradio import state_holder

from app import QUEUE_POLL_S, build_app, link_titles, open_link_js, queued, served
from ui.context import AppConfig
from ui.queue_wake import Idle
from ui.session_state import LazySessionState
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


def test_every_shared_link_id_still_opens_its_tab():
    """A tab may be added or renamed, but a link already sent to a class opens the same tab (a renamed tab keeps its
    old id in its spec's old_ids); the page presses the tab of that title (app.open_link_js)."""
    titles = link_titles(specs())
    by_id = {spec.id: spec.title for spec in specs()}
    assert {link_id: titles[link_id] for link_id in OLD_LINKS} == {k: by_id[v] for k, v in OLD_LINKS.items()}
    assert all(titles[spec.id] == spec.title for spec in specs())
    assert json.dumps(titles) in open_link_js(specs())


def test_an_unknown_tab_id_selects_no_tab():
    titles = link_titles(specs())
    for link_id in ("step_tab", "ui.step.tab", "", None):
        assert link_id not in titles  # the page's script finds no title: it stays on the tab it opens with


def test_the_queue_looks_for_new_events_every_few_milliseconds_not_every_one():
    """gradio's own attribute, set by app.queued: a gradio that renamed it would leave the app polling every 1 ms."""
    assert "sleep_when_free" in vars(gr.Blocks().queue()._queue)
    blocks = gr.Blocks()
    assert queued(blocks)._queue.sleep_when_free == QUEUE_POLL_S


def test_the_server_runs_the_app_with_its_queue_its_skips_and_its_session_states(monkeypatch):
    monkeypatch.setattr(state_holder, "SessionState", state_holder.SessionState)  # put back after the test
    blocks = served(gr.Blocks())
    assert isinstance(blocks._queue.sleep_when_free, Idle)  # the queue, woken by work
    assert "postprocess_data" in vars(blocks)  # skipped outputs passed over (ui/skips.py)
    assert state_holder.SessionState is LazySessionState
