"""A lesson is one spec: each tab's package in ui/ says in its tab.py, as `SPEC`, everything the app, Start here and
the tests need to know of it (its title, its id in a shared link, its place in the tab row, how to build it, and the
parts of its page a test looks for). `specs()` finds them, so adding a tab touches only its own package."""

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import ui


@dataclass(frozen=True)
class TabSpec:
    title: str  # on the tab's button, and on Start here's links to it
    id: str  # in a shared link (?tab=beams): the package's name; the tab's element ids begin with it ("beams-step")
    order: int  # its place in the tab row, the teaching order: Start here 0, then 10, 20, ... (room for one between)
    # lays the tab out inside the caller's gr.Tab and wires it (config: ui.context.AppConfig); may return a function
    # that app.py calls with the page and the tab's hidden button (ui/opened.py), to wire its setup (a shared
    # link's) on the tab's first opening
    build: Callable
    main: str  # the main control (a CSS selector): on the first screen with the lesson's line, in either mode
    chart: str | None = None  # what the main action draws first (a selector): on one screen with `main` after it
    try_this: str | None = None  # the "Try this" accordion (a selector), closed as the tab opens
    buttons: str | None = None  # a row of buttons (a selector) that stays one row in projector mode
    stop: str | None = None  # stops what the main action leaves running on the server (a test presses it when done)
    css: str = ""  # its rules in the app's own style sheet, beside projector mode's (the rest: ui.lesson.style)
    presets: tuple[str, ...] = ()  # the presets a link can pick on it (?preset=, ui/links.py), by name
    old_ids: tuple[str, ...] = ()  # ids it was shared under before: links already sent to classes still open it
    # plain HTTP routes its pages' scripts ask outside gradio's queue (a gradio event costs the server ~10 ms):
    # config -> a list of starlette Routes, which app.py adds before gradio's own
    routes: Callable | None = None
    # what it teaches, in one or two sentences: README's list of the lessons is written from it (deploy/readme.py)
    summary: str = ""


@cache
def specs() -> tuple[TabSpec, ...]:
    """Every tab, in teaching order: the `SPEC` of each package in ui/ whose tab.py has one (the toolkit's modules
    are not packages; a package without a tab.py, or whose tab.py has no SPEC, is no tab)."""
    found = []
    for package in pkgutil.iter_modules(ui.__path__):
        module = f"ui.{package.name}.tab"
        if not package.ispkg or importlib.util.find_spec(module) is None:
            continue
        spec = getattr(importlib.import_module(module), "SPEC", None)
        if spec is None:
            continue
        assert spec.id == package.name, f"{module}'s SPEC.id is {spec.id!r}: a tab's link id is its package's name"
        found.append(spec)
    found.sort(key=lambda spec: spec.order)
    orders = [spec.order for spec in found]
    assert len(set(orders)) == len(orders), f"two tabs share a place in the row: {[(s.id, s.order) for s in found]}"
    return tuple(found)


def opened_by(link_id: str | None) -> TabSpec | None:
    """The tab a shared link's `?tab=` opens: by its id, or by an id it was shared under before; None for no tab."""
    return next((spec for spec in specs() if link_id == spec.id or link_id in spec.old_ids), None)
