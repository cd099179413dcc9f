"""A preset in a shared link: `?tab=beams&preset=open-ended-story` opens the beams tab with that preset picked. One
rule names every tab's presets in links (`slug`), and one function reads a link's preset for a tab (`preset_in_link`),
so every tab's links behave the same: a known name picks the preset, an unknown one leaves the default and says so."""

import re
from collections.abc import Iterable
from typing import NamedTuple

import gradio as gr

from ui.events import error_html
from ui.opened import FirstOpen


def slug(name: str) -> str:
    """A preset's name in a link: the text before its ':', lowercase, each run of other characters than letters and
    digits one '-' ("Confident: capital of France" -> "confident", "2 + 2: a more probable answer" -> "2-2")."""
    return re.sub(r"[^a-z0-9]+", "-", name.split(":")[0].lower()).strip("-")


def slugs(names: Iterable[str]) -> dict[str, str]:
    """{link name: preset name} for a tab's presets; two presets with one link name are a programmer's mistake."""
    names = list(names)
    found = {slug(name): name for name in names}
    assert len(found) == len(names), f"two presets share a link name: {names}"
    return found


def query_of(request: gr.Request | None) -> dict:
    return dict(request.query_params) if request is not None else {}


class LinkPreset(NamedTuple):
    """What a link asks of one tab's preset picker."""

    name: str | None  # the preset to pick; None: the link names none for this tab (or a wrong one)
    message: str  # the message line's content: what was wrong in the link, or ""


def preset_in_link(query: dict, tab_id: str, names: Iterable[str]) -> LinkPreset:
    """The preset a link (`query`) picks on the tab `tab_id`, by its link name; a link to another tab picks none."""
    asked = query.get("preset")
    if query.get("tab") != tab_id or not asked:
        return LinkPreset(None, "")
    by_slug = slugs(names)
    if asked in by_slug:
        return LinkPreset(by_slug[asked], "")
    problem = ValueError(f"the link's preset {asked!r} is not one of {', '.join(by_slug)}; the tab shows its default")
    return LinkPreset(None, error_html(problem))


def picked_on_load(tab_id: str, dropdown: gr.Dropdown, message: gr.HTML, names: Iterable[str]):
    """For a tab whose preset applies on its dropdown's `.change`: the function app.py calls with the page and the
    tab's hidden button, which sets the dropdown to a link's preset as the tab first opens (ui/opened.py); the change
    then applies it, as when the learner picks it."""
    names = list(names)

    def open_link(request: gr.Request) -> dict:
        asked = preset_in_link(query_of(request), tab_id, names)
        return {message: asked.message} if asked.name is None else {dropdown: asked.name}

    def on_load(demo: gr.Blocks, opened: FirstOpen) -> None:
        opened.click(open_link, None, [dropdown, message], show_progress="hidden", concurrency_limit=None)

    return on_load
