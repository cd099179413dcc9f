"""The page's config stays the page's: gradio deep-copies it on every page load, so nothing in it may reach the
server's runs (a bound method of a store would copy every student's run, model and KV cache with it)."""

import inspect

import gradio as gr

from app import build_app
from ui.context import AppConfig


def test_no_state_deletes_through_a_bound_method():
    demo = build_app(AppConfig("tiny-random", "cpu"))
    states = [b for b in demo.blocks.values() if isinstance(b, gr.State)]
    callbacks = [s.delete_callback for s in states if s.delete_callback is not None]
    assert callbacks, "the step and beam tabs free their runs when a page closes"
    assert not any(inspect.ismethod(cb) for cb in callbacks)
