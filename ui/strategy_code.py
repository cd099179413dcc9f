"""The project's own code beside each strategy: read from the sampler functions themselves with
`inspect`, never copied, so what the learner reads is what produced the mask."""

import inspect

import gradio as gr

from decoding.sandbox import SOURCE
from decoding.stages import MIN_P, TEMPERATURE, TOP_K, TOP_P
from ui.events import teach
from visuals.strategies import NAMES


@teach
def strategy_source(name: str) -> str:
    """The source of the function behind strategy `name` (greedy, temperature, top_k, top_p, min_p, ...)."""
    if name not in SOURCE:
        raise ValueError(f"strategy must be one of {', '.join(SOURCE)}, got {name!r}")
    fn = SOURCE[name]
    return f"# {fn.__module__}.{fn.__name__}\n" + inspect.getsource(fn)


# the strategies the tabs' panels draw, greedy first
PICKED = ("greedy", *(stage.name for stage in (TEMPERATURE, TOP_K, TOP_P, MIN_P)))


def code_view(names=PICKED, value: str = TOP_P.name):
    """A strategy picker and the code it shows, wired together; call inside a gr.Blocks layout.

    In a closed panel: gradio draws a closed panel's components as it opens, and the code editor (CodeMirror, the
    heaviest script a lesson loads) is then loaded only by who asks for it. Opening the Step lesson at 390x844 with
    the CPU slowed 4x took 3.3-3.5 s of the phone's main thread until Prefill could be pressed with the code shown,
    2.2-2.4 s with it in this panel (docs/measurements/pages.md)."""
    with gr.Accordion("The code behind each mask", open=False, elem_classes="lab-code"), gr.Row(equal_height=False):
        picker = gr.Radio(
            [(NAMES.get(n, n), n) for n in names],
            value=value,
            label="Show the code of",
            info="the project's own function that made this panel's mask",
            scale=1,
            min_width=200,
        )
        code = gr.Code(
            strategy_source(value),
            language="python",
            label="the project's own code (read with inspect)",
            scale=4,
            lines=12,
        )
    picker.change(strategy_source, picker, code, show_progress="hidden")
    return picker, code
