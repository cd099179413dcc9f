"""A tab built and wired in a page of its own (no model is loaded for that), and the function its page runs when a
button is clicked: how the handler tests drive a tab by its components' names."""

import gradio as gr


def page(tab, config):
    """`tab` (a module with layout(config) and wire(c, config)) in a Blocks of its own: (the Blocks, its components)."""
    with gr.Blocks() as demo:
        c = tab.layout(config)
        tab.wire(c, config)
    return demo, c


def wired(demo, button):
    """The function the page runs when `button` is clicked."""
    return next(f.fn for f in demo.fns.values() if (button._id, "click") in f.targets)
