"""ui.kit.skips: an output an answer skips is passed over on the server, and the browser gets the answer gradio
sends."""

import asyncio

import gradio as gr
import pytest
from gradio.state_holder import SessionState

from ui.kit.skips import leave_skips

BIG = "<p>" + "x" * 20_000 + "</p>"


def app():
    with gr.Blocks() as demo:
        a, b = gr.HTML(BIG), gr.HTML(BIG)
        n = gr.Number(1)
        kept = gr.State(0)
        go = gr.Button()
        go.click(lambda: None, None, [a, b, n, kept])
        go.click(lambda: None, None, a)
    return demo, (a, b, n, kept)


def answers(demo, fn_index, predictions):
    """What gradio's postprocess sends for `predictions`, and how many components it built doing it."""
    built = []
    init = gr.HTML.__init__

    def counted(self, *args, **kwargs):
        built.append(1)
        init(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gr.HTML, "__init__", counted)
        out = asyncio.run(demo.postprocess_data(demo.fns[fn_index], predictions, SessionState(demo)))
    return out, len(built)


@pytest.mark.parametrize(
    "answer",
    [
        lambda c: [gr.skip(), "<b>new</b>", 2, gr.skip()],  # positional
        lambda c: {c[1]: "<b>new</b>", c[2]: 2},  # keyed, naming two of four
        lambda c: gr.skip(),  # one skip for every output
    ],
)
def test_the_same_answer_with_no_component_built(answer):
    plain, outputs = app()
    gradios, built = answers(plain, 0, answer(outputs))
    lean, outputs = app()
    leave_skips(lean)
    ours, built_here = answers(lean, 0, answer(outputs))
    assert ours == gradios
    assert built > 0 and built_here == 0


def test_a_lone_output_skipped_and_one_given():
    for value in (gr.skip(), "<i>x</i>"):
        plain, _ = app()
        lean, _ = app()
        leave_skips(lean)
        assert answers(lean, 1, value)[0] == answers(plain, 1, value)[0]
