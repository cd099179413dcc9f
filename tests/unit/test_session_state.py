"""ui.kit.session_state: a session's state made without gradio's copies of the blocks' configs, and the same configs
gradio's own holds once they are read, whatever the events wrote before."""

import gradio as gr
from gradio import state_holder

from ui.kit import session_state
from ui.kit.session_state import LazySessionState

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
    assert set(vars(lazy)) - {"_app_blocks", "_stale", "_values"} == set(vars(gradios))
    assert list(lazy.components) == list(gradios.components)  # gradio's deep links read the same configs


def test_what_events_write_is_in_the_copies_as_gradio_keeps_them():
    """What gradio's process_api writes: each input's and output's value, a State's new value, a component replaced
    by a prop update (gr.update), then its value; in any order, and read between writes or not."""
    demo = blocks()
    gradios, lazy = GRADIOS(demo), LazySessionState(demo)
    box, slider, kept = (
        next(b for b in demo.blocks.values() if isinstance(b, kind)) for kind in (gr.Textbox, gr.Slider, gr.State)
    )
    made, make = [], lazy.blocks_config.config_for_block  # the lazy one's copies, counted as it makes them
    lazy.blocks_config.config_for_block = lambda *args: made.append(args[0]) or make(*args)

    def both(write):
        for state in (gradios, lazy):
            write(state)
        assert made == [], "a copy made as an event wrote"

    both(lambda s: s._update_value_in_config(box._id, "b!"))  # an input's value (preprocess), then an output's
    both(lambda s: s.__setitem__(kept._id, 1))  # a State's new value
    assert list(lazy.components) == list(gradios.components)
    made.clear()
    both(lambda s: s.__setitem__(slider._id, gr.Slider(0, 20, value=5, render=False)))  # a prop update
    both(lambda s: s._update_config(slider._id))
    both(lambda s: s._update_value_in_config(slider._id, 7))
    both(lambda s: s._update_value_in_config(box._id, "c"))
    both(lambda s: s.__setitem__(kept._id, 2))
    assert list(lazy.components) == list(gradios.components)
    assert next(c for c in lazy.components if c["id"] == slider._id)["props"]["value"] == 7
    assert sorted(made) == sorted([slider._id, kept._id])  # read again: only what was written is made again


def test_the_apps_state_holder_makes_lazy_states(monkeypatch):
    monkeypatch.setattr(state_holder, "SessionState", state_holder.SessionState)  # put back after the test
    session_state.use()
    holder = state_holder.StateHolder()
    holder.set_blocks(blocks())
    assert isinstance(holder["a session"], LazySessionState)
