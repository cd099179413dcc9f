"""ui.session_state: a session's state made without gradio's copy of every block's config, and the same state
gradio makes once a copy is read."""

import gradio as gr
from gradio import state_holder

from ui import session_state
from ui.session_state import LazySessionState

GRADIOS = LazySessionState.__bases__[0]  # gradio's own, even where the app's `use()` has replaced it in this process


def blocks() -> gr.Blocks:
    with gr.Blocks() as demo:
        with gr.Column():
            box = gr.Textbox("a", label="A")
            gr.Slider(0, 10, value=3)
        kept = gr.State(0)
        gr.Button().click(lambda x, n: (x + "!", n + 1), [box, kept], [box, kept])
    return demo


def test_it_starts_with_no_copies_and_holds_what_gradios_state_holds():
    demo = blocks()
    gradios, lazy = GRADIOS(demo), LazySessionState(demo)
    assert lazy.config_values == {} and gradios.config_values  # the copies gradio made up front, not made here
    # every attribute gradio's own sets (should a gradio change add one, this fails)
    assert set(vars(lazy)) - {"_app_blocks"} == set(vars(gradios))
    assert list(lazy.components) == list(gradios.components)  # gradio's deep links read the same configs


def test_a_value_an_event_sets_is_in_its_copy():
    demo = blocks()
    lazy = LazySessionState(demo)
    box = next(b for b in demo.blocks.values() if isinstance(b, gr.Textbox))
    lazy._update_value_in_config(box._id, "b!")
    assert lazy.config_values[box._id]["props"]["value"] == "b!"
    assert next(c for c in lazy.components if c["id"] == box._id)["props"]["value"] == "b!"


def test_the_apps_state_holder_makes_lazy_states(monkeypatch):
    monkeypatch.setattr(state_holder, "SessionState", state_holder.SessionState)  # put back after the test
    session_state.use()
    holder = state_holder.StateHolder()
    holder.set_blocks(blocks())
    assert isinstance(holder["a session"], LazySessionState)
