"""What every lesson's tab opens with, in one place: its heading and the one line it teaches (`lesson`), and its
"Try this" walk-through (`try_this`).

The rule for "Try this", the same on every tab: it is CLOSED when the tab opens. A tab's first screen is the lesson's
line, its controls and its main button, at 1280x720 in normal and projector mode alike; the steps open on a click,
and the guided path through the lessons is the Start here tab's class plans."""

import gradio as gr

from ui.projector import NARROW_PX

# the one line a tab teaches, the first thing on its screen, read from the back of a room; its heading above it
# gradio's footer (its API and Settings links) sits outside the container the app's CSS is scoped to: in the head
TAP_HEAD = f"""<style>
@media (max-width: {NARROW_PX - 0.02}px) {{ footer button, footer a {{ min-height: 24px; min-width: 24px; }} }}
</style>"""
CSS = f"""
.lab-lesson h2 {{ margin: 0 0 2px 0; font-size: 1.25em; }}
/* a dropdown's chosen value: gradio draws its arrow over the last 40 px of the box the value is written in, so a long
   preset's name ran under it ("Confident: capita▾l" on a phone); the name now ends in an ellipsis before the arrow */
input[role=combobox] {{ padding-right: calc(2 * var(--size-5)); text-overflow: ellipsis; }}
.lab-lesson p {{ margin: 0; font-size: 1.1em; }}
/* a phone: what a thumb presses. A button 44 px tall (WCAG 2.5.5), every other control at least 24x24 (2.5.8):
   gradio draws radios and checkboxes at 16 px, number boxes 22 px tall, ↺ 27x22, a slider's track 8 px, a panel's
   title 20 px */
@media (max-width: {NARROW_PX - 0.02}px) {{
  button.lg, button.md, button.primary, button.secondary, button.stop {{ min-height: 44px; }}
  input[type=radio], input[type=checkbox] {{ width: 24px; height: 24px; flex: 0 0 24px; }}
  input[type=number], input[type=text], input:not([type]) {{ min-height: 32px !important; }}
  input[type=range] {{ min-height: 24px; }}
  button.reset-button {{ min-width: 32px; min-height: 32px; }}
  .label-wrap {{ min-height: 32px; }}
  button {{ min-width: 24px; min-height: 24px; }}
  button.lab-term {{ min-width: 0; min-height: 0; }}
  /* a dropdown a row of its own: beside a prompt, a preset's name showed five letters */
  .block:has(> .container input[role=combobox]) {{ min-width: 100% !important; }}
}}
"""

COUNTS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def lesson(line: str, heading: str | None = None, elem_id: str | None = None, first: str = "") -> gr.Markdown:
    """The tab's heading (if any) and the one sentence it teaches, marked `lab-lesson` (the class the first-screen
    test finds), then the beginner's line: what to press first (`first`, Markdown)."""
    text = f"## {heading}\n{line}" if heading else line
    return gr.Markdown(f"{text}\n\n{first}" if first else text, elem_classes="lab-lesson", elem_id=elem_id)


def try_this(steps_markdown: str, n: int, elem_id: str | None = None, **markdown) -> gr.Accordion:
    """A closed "Try this (n steps)" accordion holding the steps; `markdown` goes to the steps' gr.Markdown."""
    with gr.Accordion(f"Try this ({COUNTS.get(n, n)} steps)", open=False, elem_id=elem_id) as accordion:
        gr.Markdown(steps_markdown, **markdown)
    return accordion


def style(css: str, elem_id: str) -> gr.HTML:
    """A tab's own style sheet, in a block that is itself hidden (its rules still apply): an empty block would add a
    gap above the lesson's line."""
    return gr.HTML(f"<style>{css} #{elem_id} {{ display: none; }}</style>", elem_id=elem_id)
