"""The page's markdown, made HTML on the server: for text that rides inside an HTML element a click patches (the step
tab's engine orders and request numbers), where a gr.Markdown of its own would be one more output of every click.
Raw HTML in the text (the glossary's marks) passes through, as gr.Markdown lets it."""

from markdown_it import MarkdownIt

_MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable("table")


def html_of(markdown: str) -> str:
    """`markdown` as HTML, marked `prose` (gradio's text style)."""
    return f'<div class="prose">{_MARKDOWN.render(markdown)}</div>' if markdown else ""
