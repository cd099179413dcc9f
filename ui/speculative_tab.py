"""The "Speculative decoding" tab: a cheap draft guesses K tokens, the model checks them all in one forward pass,
round by round, then a whole run timed beside plain decoding. Layout and wiring; handlers in
ui/speculative_handlers.py."""

from functools import partial

import gradio as gr

from decoding.pipeline import ORDERS
from ui import speculative_handlers as h
from ui.context import CHAT, RAW, AppConfig
from ui.events import model_event
from visuals.speculative import CSS
from visuals.speculative_captions import EXACTNESS

INTRO = """## Speculative decoding: guess several tokens, check them in one pass
Decode is memory-bound: every token costs one full read of the weights, and a pass over 6 tokens reads them once
too. So a cheap **draft** guesses K tokens, the model (the **target**) reads the last token and all K guesses in
**one verify pass**, keeps the guesses that agree with what it would have written, and adds one token of its own.
A round writes 1 to K + 1 tokens for one pass of the model, and the text does not change. The speed comes from a
draft that is **cheap and usually right**; this tab measures when it is and is not."""
TRY_THIS = """**Try this**
1. Preset **Copy-edit: prompt lookup shines**, press **Prefill**, then **Round** three times (round 1 copies from
   the system prompt and misses; round 2 finds nothing to copy). Round 3: the orange chips are the last token and its
   earlier occurrence in the prompt (lookup tries the last two tokens first, then one); the purple-outlined tokens
   after it are copied as the guesses (dashed chips). Blue ✓ kept, red ✗ rejected (the answer fixes the spelling
   there), faded: never checked. The orange chip with "+1 target" is the model's own token, free from the same pass.
2. Press **Round** twice more: round 4 finds nothing to copy and is one plain step, round 5 keeps all eight guesses
   at once. Then **Back**: the last round is undone (its tokens gone, the KV cache cropped back), and **Round**
   replays it identically.
3. Press **Run to end**: more than 6 tokens per pass of the model. Plain decoding then runs on the same prompt: the
   same tokens, and speculation faster (the time line shows where the time went: on a 2-core CPU a pass over 9
   tokens costs about two one-token passes, not nine; the more idle the machine, the bigger the gain).
4. Preset **Open story: nothing to copy**, **Run to end**: lookup rarely finds a match, about 1 token per pass, and
   the wrong guesses it does make lengthen the passes: slower than plain decoding.
5. Preset **Early exit: cheap guesses, mostly wrong**, **Run to end**: this model was not trained to exit early, so
   its first 8 layers guess badly and speculation is *slower* than plain decoding.
6. Preset **Sampling: the accept rule**, press **Prefill** and **Round** a few times: each orange diamond is the
   uniform drawn; a guess is kept when it falls below the bar min(1, p/q). After a rejection the bonus comes from
   the residual.
"""
COPY = (
    "Fix the spelling in this paragraph and return the whole paragraph: The quick brown fox jumps over the lazzy dog. "
    "The dog was not amused, and the fox ran back into the forrest before anyone could catch it. Later that evening "
    "the fox came back to the river, drank some water, and fell asleep under an old oak tree. In the morning the dog "
    "was waiting by the tree, but the fox had already gone home to its family."
)
STORY = "Tell me a story about a dragon who learns to paint."
PRESETS = {  # name: (prompt, format, source, K, L, max new, temperature, top-k, top-p, penalty, note)
    "Copy-edit: prompt lookup shines": (
        COPY, CHAT, "prompt lookup", 8, 8, 120, 0.0, 0, 1.0, 1.0,
        "The answer copies the prompt, so what followed the last token where it occurred earlier is usually right.",
    ),
    "Open story: nothing to copy": (
        STORY, CHAT, "prompt lookup", 8, 8, 80, 0.0, 0, 1.0, 1.0,
        "A new story repeats little of its prompt: lookup rarely matches, and its few guesses are wrong.",
    ),
    "Early exit: cheap guesses, mostly wrong": (
        COPY, CHAT, "early exit (first L layers)", 3, 8, 40, 0.0, 0, 1.0, 1.0,
        "The first 8 of 30 layers, then the final norm and head: each guess costs a quarter pass and is rarely right.",
    ),
    "Sampling: the accept rule": (
        COPY, CHAT, "prompt lookup", 5, 8, 80, 0.8, 0, 0.95, 1.0,
        "At temperature 0.8 each guess is kept with probability p(guess): watch the uniform against the bar.",
    ),
}  # fmt: skip
DEFAULT = "Copy-edit: prompt lookup shines"


def apply_preset(name):
    if name not in PRESETS:
        return (gr.skip(),) * 11
    *values, note = PRESETS[name]
    return (*values, f"*{note}*")


def build(config: AppConfig) -> None:
    gr.HTML(f"<style>{CSS}</style>")
    gr.Markdown(INTRO)
    with gr.Accordion("Try this (six steps)", open=True):
        gr.Markdown(TRY_THIS)
    sid = gr.State(None, delete_callback=h.release_spec)
    p = PRESETS[DEFAULT]
    with gr.Row():
        with gr.Column(scale=1, min_width=300):
            preset = gr.Dropdown(list(PRESETS), value=DEFAULT, label="Preset", elem_id="spec-preset")
            note = gr.Markdown(f"*{p[-1]}*")
            prompt = gr.Textbox(p[0], label="Prompt", lines=3)
            template = gr.Radio([RAW, CHAT], value=p[1], label="Prompt format")
            source = gr.Radio(list(h.SOURCES), value=p[2], label="Draft", elem_id="spec-source")
            with gr.Row():
                k = gr.Number(p[3], label=f"Draft tokens K (1-{h.MAX_K_UI})", precision=None, step=1,
                              elem_id="spec-k")  # fmt: skip
                layer = gr.Number(p[4], label="Exit layer L (early exit)", precision=None, step=1, elem_id="spec-l")
            max_new = gr.Slider(1, h.MAX_NEW_UI, p[5], step=1, label="Max new tokens", elem_id="spec-max-new")
            with gr.Accordion("Samplers (as in Step by step)", open=False):
                temperature = gr.Slider(0, 2, p[6], step=0.05, label="Temperature", info="0 = greedy")
                top_k = gr.Slider(0, 100, p[7], step=1, label="Top-k", info="0 = off")
                top_p = gr.Slider(0.05, 1, p[8], step=0.01, label="Top-p", info="1 = off")
                penalty = gr.Slider(1, 2, p[9], step=0.05, label="Repetition penalty", info="1 = off")
                order = gr.Dropdown(list(ORDERS), value="transformers", label="Engine order")
                seed = gr.Number(0, label="Seed", precision=None, step=1)
        with gr.Column(scale=3, min_width=560):
            with gr.Row(elem_id="spec-buttons"):
                prefill_btn = gr.Button("Prefill", elem_id="spec-prefill")
                round_btn = gr.Button("Round", variant="primary", elem_id="spec-round")
                back_btn = gr.Button("Back", elem_id="spec-back")
                end_btn = gr.Button("Run to end", elem_id="spec-end")
                reset_btn = gr.Button("Reset", elem_id="spec-reset")
            blank = h.blank()
            status = gr.Markdown(elem_id="spec-status")
            chips = gr.HTML(blank[2], elem_id="spec-chips")
            with gr.Row():
                verify = gr.Plot(blank[3], show_label=False, elem_id="spec-verify")
                decisive = gr.Plot(blank[4], show_label=False, elem_id="spec-decisive")
            written = gr.Markdown(elem_id="spec-text")
    gr.Markdown("### Over the whole run")
    run_md = gr.Markdown(elem_id="spec-run-text")
    run_fig = gr.Plot(blank[5], show_label=False, elem_id="spec-run")
    speed = gr.Markdown(elem_id="spec-speed")
    timeline = gr.Plot(blank[7], show_label=False, elem_id="spec-timeline")
    with gr.Accordion("Which settings keep the output exact", open=False):
        gr.Markdown(EXACTNESS)

    controls = [prompt, template, source, k, layer, max_new, temperature, top_k, top_p, penalty, order, seed]
    outputs = [sid, status, chips, verify, decisive, run_fig, run_md, timeline, speed, written]
    preset.change(
        apply_preset, preset, [prompt, template, source, k, layer, max_new, temperature, top_k, top_p, penalty, note]
    ).then(h.reset, sid, outputs)
    model_event(prefill_btn.click, partial(h.prefill, config), [sid, *controls], outputs, show_progress="minimal")
    model_event(round_btn.click, partial(h.step, config), [sid, *controls], outputs, show_progress="minimal")
    model_event(back_btn.click, partial(h.back, config), [sid], outputs, show_progress="minimal")
    model_event(end_btn.click, partial(h.run_to_end, config), [sid, *controls], outputs)
    reset_btn.click(h.reset, sid, outputs)
