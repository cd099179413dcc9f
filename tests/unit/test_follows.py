"""An event that follows a control's value runs for its last value (ui.events.FOLLOWS). Gradio's default for any
trigger but `.change` is "once": a value that comes while the one before is answered is dropped, and the page keeps
showing what the handler made of the value before (a sandbox slider set back in range as its box lost the focus kept
the message and chart of the value typed: tests/e2e/test_bad_input_e2e.py saw it on a loaded machine)."""

import gradio as gr

from app import build_app
from ui.context import AppConfig

CONTROLS = (gr.Slider, gr.Number, gr.Radio, gr.Checkbox, gr.CheckboxGroup, gr.Dropdown)
VALUE_EVENTS = {"change", "input", "release"}


def test_every_handler_of_a_controls_value_runs_for_its_last_value():
    demo = build_app(AppConfig("tiny-random", "cpu"))
    following, dropping = 0, []
    for fn in demo.fns.values():
        if fn.fn is None:  # the page's own script: no request to be pending
            continue
        moved = [
            f"{demo.blocks[block_id].elem_id or demo.blocks[block_id].label}.{event}"
            for block_id, event in fn.targets
            if event in VALUE_EVENTS and isinstance(demo.blocks.get(block_id), CONTROLS)
        ]
        if not moved:
            continue
        following += 1
        if fn.trigger_mode != "always_last":
            dropping.append(f"{fn.name} on {', '.join(moved)}: {fn.trigger_mode}")
    assert following >= 20, "the lessons' knobs and presets are wired through their handlers"
    assert dropping == [], "\n".join(dropping)
