"""What every lesson's tab opens with, in one place: its heading and the one line it teaches (`lesson`), and its
"Try this" walk-through (`try_this`).

The rule for "Try this", the same on every tab: it is CLOSED when the tab opens. A tab's first screen is the lesson's
line, its controls and its main button, at 1280x720 in normal and projector mode alike; the steps open on a click,
and the guided path through the lessons is the Start here tab's class plans."""

import gradio as gr

# the one line a tab teaches, the first thing on its screen, read from the back of a room; its heading above it
CSS = """
.lab-lesson h2 { margin: 0 0 2px 0; font-size: 1.25em; }
.lab-lesson p { margin: 0; font-size: 1.1em; }
"""

COUNTS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def lesson(line: str, heading: str | None = None, elem_id: str | None = None) -> gr.Markdown:
    """The tab's heading (if any) and the one sentence it teaches, marked `lab-lesson` (the class the first-screen
    test finds)."""
    text = f"## {heading}\n{line}" if heading else line
    return gr.Markdown(text, elem_classes="lab-lesson", elem_id=elem_id)


def try_this(steps_markdown: str, n: int, elem_id: str | None = None, **markdown) -> gr.Accordion:
    """A closed "Try this (n steps)" accordion holding the steps; `markdown` goes to the steps' gr.Markdown."""
    with gr.Accordion(f"Try this ({COUNTS.get(n, n)} steps)", open=False, elem_id=elem_id) as accordion:
        gr.Markdown(steps_markdown, **markdown)
    return accordion


def style(css: str, elem_id: str) -> gr.HTML:
    """A tab's own style sheet, in a block that is itself hidden (its rules still apply): an empty block would add a
    gap above the lesson's line."""
    return gr.HTML(f"<style>{css} #{elem_id} {{ display: none; }}</style>", elem_id=elem_id)
