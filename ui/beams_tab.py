"""The "Beam search & repetition" tab: beam search one step at a time beside greedy, then (from
ui/repetition_panel.py) why greedy loops. Layout and one line of wiring per event; handlers in ui/beams_handlers.py."""

from functools import partial

import gradio as gr

from ui import beams_handlers as h
from ui import repetition_panel
from ui.context import CHAT, RAW, AppConfig
from ui.events import model_event
from visuals.beams import beams_markdown
from visuals.theme import empty_figure

INTRO = """## Beam search, step by step
Greedy takes the most probable token at every step, which is only *locally* best: a slightly less likely word now can
open a much more likely sentence later. **Beam search** keeps several partial sequences (beams). At each step every
live beam is extended by every token of the vocabulary, each extension is scored by its **cumulative
log-probability**, and only the best `num_beams` survive. A beam that ends (end-of-turn token, or the length limit)
is set aside as a finished hypothesis, ranked by its length-penalised score. The steps are exactly those of
transformers' `generate(num_beams=k, do_sample=False)`: the answer is the same, token for token."""
TRY_THIS = """**Try this**
1. Pick the preset **2 + 2: a more probable answer**, press **Step** a few times: blue paths are live beams, grey dots
   candidates that were scored and pruned. Hover a node for its log-probabilities.
2. Press **Run to end**. Below the tree: greedy's *The answer to this classic math problem is 4.* has total log p
   −9.25, beam search's *2 + 2 = 4* −4.60, about 100× more probable, though greedy took the likeliest token each time.
3. Set **length penalty** to 2 and run again: longer hypotheses now score better, and the answer is a 20-token text
   *less* probable than greedy's. Back at 1, set **early stopping** to True: the same answer, three steps sooner.
4. Pick **open-ended story**, press **Run to end**, then the same with **name a color**: beam search returns the
   model's most generic text, a fairy-tale cliché and a stock "as an AI" refusal, far more probable and far blander
   than greedy's.
5. Set **number of beams** to 1: one beam is greedy, the tree a single path with its pruned alternatives.
"""
PRESETS = {  # name: (prompt, format, beams, length penalty, early stopping, max new tokens, what to watch)
    "2 + 2: a more probable answer": (
        "What is 2 + 2?", CHAT, 4, 1.0, "false", 20,
        "Greedy opens with the likeliest word and is stuck with a long sentence; a beam that began less likely ends "
        "with a whole answer 100× more probable.",
    ),
    "open-ended story: the cliché": (
        "Tell me a story.", CHAT, 4, 1.0, "false", 40,
        "Beam search finds the most probable story opening the model knows, a fairy-tale cliché (\"A long time ago, "
        "in a land far, far away\"); greedy's own opening is less probable and more specific.",
    ),
    "name a color: the safe refusal": (
        "Name a color.", CHAT, 4, 1.0, "false", 24,
        "The most probable answer is not an answer: beam search lands on a stock refusal, greedy names a colour.",
    ),
    "raw text continuation": (
        "The best way to learn a language is", RAW, 4, 1.0, "false", 20,
        "No end-of-turn token in sight: every beam runs to max new tokens, and the most probable one wins.",
    ),
}  # fmt: skip
DEFAULT = "2 + 2: a more probable answer"
PENALTY_HINT = (  # in backticks: two bare asterisks would turn the rest of the hint bold
    "transformers divides the summed log-probability by the generated `length ** penalty`; vLLM counts the prompt "
    "too. 0: no division (short wins); 1: per-token average; above 1 favours longer answers"
)
EARLY_CHOICES = [
    ("False: stop when no live beam can still win (default)", "false"),
    ("True: stop once num_beams hypotheses have finished", "true"),
    ("never: stop only when no beam could win at max length", "never"),
]
CSS = """
#beam-buttons button { min-width: 90px; }
"""


def apply_preset(name):
    if name not in PRESETS:
        return (gr.skip(),) * 7
    *values, note = PRESETS[name]
    return (*values, f"*{note}*")


def build(config: AppConfig) -> None:
    gr.HTML(f"<style>{CSS}</style>")
    gr.Markdown(INTRO)
    with gr.Accordion("Try this (five steps)", open=True):
        gr.Markdown(TRY_THIS)
    sid = gr.State(None, delete_callback=h.release_search)
    with gr.Row():
        with gr.Column(scale=1, min_width=300):
            preset = gr.Dropdown(
                list(PRESETS), value=DEFAULT, label="Preset", info="each one shows one thing", elem_id="beam-preset"
            )
            preset_note = gr.Markdown(f"*{PRESETS[DEFAULT][-1]}*")
            prompt = gr.Textbox(PRESETS[DEFAULT][0], label="Prompt", lines=2)
            template = gr.Radio(
                [RAW, CHAT], value=CHAT, label="Prompt format",
                info="raw: the text as typed; chat: one user turn in the model's chat template",
            )  # fmt: skip
            beams_n = gr.Slider(
                1, h.MAX_BEAMS_UI, 4, step=1, label="Number of beams", info="1 = greedy", elem_id="beam-k"
            )
            penalty = gr.Slider(-2, 3, 1.0, step=0.1, label="Length penalty", info=PENALTY_HINT, elem_id="beam-penalty")
            early = gr.Radio(EARLY_CHOICES, value="false", label="Early stopping", elem_id="beam-early")
            max_new = gr.Slider(
                1, h.MAX_NEW_UI, 20, step=1, label="Max new tokens", info="per beam; 1-64", elem_id="beam-max-new"
            )
        with gr.Column(scale=3, min_width=560):
            with gr.Row(elem_id="beam-buttons"):
                step_btn = gr.Button("Step", variant="primary", elem_id="beam-step")
                end_btn = gr.Button("Run to end", elem_id="beam-end")
                reset_btn = gr.Button("Reset", elem_id="beam-reset")
            status = gr.Markdown(elem_id="beam-status")
            tree = gr.Plot(empty_figure(h.TREE_BLANK, 380), show_label=False, elem_id="beam-tree")
            table = gr.Markdown(beams_markdown([]), elem_id="beam-table")
    gr.Markdown("### Greedy beside beam search")
    compare_md = gr.Markdown(elem_id="beam-compare-text")
    compare_plot = gr.Plot(empty_figure(h.COMPARE_BLANK, 300), show_label=False, elem_id="beam-compare")

    inputs = [sid, prompt, template, beams_n, penalty, early, max_new]
    outputs = [sid, tree, table, status, compare_plot, compare_md]
    preset.change(apply_preset, preset, [prompt, template, beams_n, penalty, early, max_new, preset_note]).then(
        h.reset, sid, outputs
    )
    model_event(step_btn.click, partial(h.step, config), inputs, outputs, show_progress="minimal")
    model_event(end_btn.click, partial(h.run_to_end, config), inputs, outputs)
    reset_btn.click(h.reset, sid, outputs)

    gr.Markdown("---")
    repetition_panel.build(config)
