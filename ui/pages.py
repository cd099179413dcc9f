"""One lesson, one page: each lesson's page of the app, the navigation between them, and the links sent before.

Each lesson is its own page of one gr.Blocks (gradio's `Blocks.route`): gradio serves a page's HTML with a config
holding that page's components and events alone (routes.py, `get_page_config`), so a student's browser downloads and
builds the lesson it opened, not all eleven. The pages share one process, one queue, the model and the session store.

The navigation (`navigation`) is the app's own, drawn on every page: gradio's navbar draws one link per page in a row
that wraps onto as many rows as it needs on a phone. Ours is one row on a phone, a "Lessons" menu that opens on a tap
(a `<details>`, so it works without a script and from the keyboard), and the whole list of lessons, in teaching order,
on a wider screen, where it wraps rather than running past the edge. A link to a page is a plain link: the new page
reads projector mode and a class round's teacher key from the browser's localStorage, where the page that set them
left them (ui/projector.py, and the class round lesson's own page).

A link already sent to a class opens the app's first page with `?tab=<id>` (and a preset, a notice...): `OldLink`
answers it with a redirect to the lesson's page, the query kept whole, its `tab` the lesson's id now (an id a lesson
was shared under before, in its spec's `old_ids`, becomes the id its preset picker reads).
"""

import html
from urllib.parse import urlencode

import gradio as gr
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import BaseRoute, Match

from ui.projector import NARROW_PX
from ui.tabs import TabSpec, opened_by

HOME = "start"  # the spec that is the app's first page, at "/"
MIN_TAP_PX = 44  # on a phone, every link and the menu's button at least this tall (WCAG 2.5.5)
WIDE_LINK_PX = 36  # on a wider screen, pointed at with a mouse: the lesson's first screen keeps the height


def path_of(spec: TabSpec) -> str:
    """A lesson's page, relative to the app's root: "" for Start here, else its link id."""
    return "" if spec.id == HOME else spec.id


def href(spec: TabSpec) -> str:
    """A link to the lesson's page that works from any page of the app, however deep it is mounted: relative to the
    page, which sits one level under the root."""
    return f"./{path_of(spec)}"


def nav_html(specs: tuple[TabSpec, ...], here: TabSpec) -> str:
    links = "".join(
        f'<li><a href="{href(spec)}"{" aria-current=page" if spec is here else ""}>{html.escape(spec.title)}</a></li>'
        for spec in specs
    )
    return (
        f'<nav aria-label="Lessons"><details><summary>Lessons<span class="lab-nav-here">: '
        f"{html.escape(here.title)}</span></summary><ul>{links}</ul></details></nav>"
    )


# on a wide screen the menu is always open and its button hidden; on a phone the button opens it over the page
OPEN_ON_WIDE_JS = f"""
const details = element.querySelector('details');
const wide = matchMedia('(min-width: {NARROW_PX}px)');
const follow = () => {{ details.open = wide.matches; }};
follow();
wide.addEventListener('change', follow);
"""

CSS = f"""
#lab-nav {{ padding: 0; }}
#lab-nav nav ul {{ list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 2px 4px; }}
#lab-nav nav li {{ margin: 0; }}
#lab-nav nav a {{ display: inline-flex; align-items: center; min-height: {WIDE_LINK_PX}px; padding: 0 8px;
  border-radius: var(--radius-md); text-decoration: none; color: var(--body-text-color);
  font-size: calc(var(--text-md) - 1px); white-space: nowrap; transition: none; }}
#lab-nav nav a:hover {{ background: var(--background-fill-secondary); }}
#lab-nav nav a[aria-current=page] {{ background: var(--color-accent); color: white; font-weight: 700; }}
#lab-nav nav a:focus-visible, #lab-nav summary:focus-visible {{ outline: 3px solid var(--color-accent);
  outline-offset: 2px; }}
#lab-nav summary {{ display: none; }}
@media (max-width: {NARROW_PX - 0.02}px) {{
  #lab-nav {{ position: relative; }}
  #lab-nav summary {{ display: flex; align-items: center; min-height: {MIN_TAP_PX}px; padding: 0 12px;
    border: 1px solid var(--border-color-primary); border-radius: var(--radius-md); cursor: pointer;
    font-weight: 700; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }}
  #lab-nav summary .lab-nav-here {{ font-weight: 400; overflow: hidden; text-overflow: ellipsis; }}
  #lab-nav details[open] ul {{ position: absolute; z-index: 50; left: 0; right: 0; top: calc(100% + 4px);
    flex-direction: column; flex-wrap: nowrap; padding: 6px; background: var(--background-fill-primary);
    border: 1px solid var(--border-color-primary); border-radius: var(--radius-md);
    box-shadow: var(--shadow-drop-lg); max-height: 80vh; overflow-y: auto; }}
  #lab-nav nav a {{ display: flex; min-height: {MIN_TAP_PX}px; }}
}}
"""


def navigation(specs: tuple[TabSpec, ...], here: TabSpec) -> gr.HTML:
    """The navigation on `here`'s page: a link to every lesson, `here`'s marked as the current page."""
    return gr.HTML(nav_html(specs, here), elem_id="lab-nav", js_on_load=OPEN_ON_WIDE_JS, padding=False)


def lesson_url(query: dict) -> str | None:
    """Where a link to the app's first page with this query (`?tab=beams&preset=2-2`) now goes: the lesson's page,
    the query kept, its `tab` the lesson's id; None for a link that names no lesson (Start here's own, or none)."""
    spec = opened_by(query.get("tab"))
    if spec is None or spec.id == HOME:
        return None
    return f"{path_of(spec)}?{urlencode({**query, 'tab': spec.id})}"


class OldLink(BaseRoute):
    """GET "/" with `?tab=` naming a lesson: a redirect to its page. Every other request to "/" goes on to gradio's
    own page route (this route does not match it)."""

    def matches(self, scope):
        if scope["type"] != "http" or scope["path"] != "/" or scope["method"] not in ("GET", "HEAD"):
            return Match.NONE, {}
        return (Match.FULL, {}) if lesson_url(dict(Request(scope).query_params)) else (Match.NONE, {})

    def url_path_for(self, name, /, **path_params):
        raise NotImplementedError("the old links' redirect has no name")

    async def handle(self, scope, receive, send):
        # relative to "/", so it holds where the app is mounted under a path of its own
        target = lesson_url(dict(Request(scope).query_params))
        await RedirectResponse(f"./{target}", status_code=302)(scope, receive, send)
