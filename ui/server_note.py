"""What holds the shared model, said on every page while long work holds it alone (a timing measurement): at the top of
the page, kept in view as the learner scrolls, and under each lesson's main button, whose click waits until it ends.

The page asks the server every two seconds, while it is visible, with a plain GET of a small JSON route
(`ROUTE`), not a gradio event: a gr.Timer's tick was an event of every open page every five seconds (a class of
100: twenty events a second on the server), and each event costs the page its status messages
(docs/measurements/step.md). The same ask tells the page whether the server is there at all: the route answers the
server's boot id beside the note, and ui/alive.py's script asks it and shows its banner; this module's script writes
the note from what that ask answered."""

import json

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from decoding.models import loading
from ui import alive
from ui.context import AppConfig
from ui.markup import html_of
from ui.serving.tab import server_note

ROUTE = "/lab/server-note"
# the note's line at the top, in view however far down the page the learner is
CSS = """
#server-note { position: sticky; top: 0; z-index: 20; background: var(--background-fill-primary); }
#server-note:empty, #server-note:not(:has(p, strong, b)) { display: none; }  /* no note: no block, no gap */
[data-held] { position: relative; overflow: visible; }
[data-held]::after { content: "⏳ " attr(data-held); position: absolute; top: calc(100% + 2px); left: 0; z-index: 5;
  width: max-content; max-width: min(24em, 90vw); white-space: normal; text-align: left; padding: 1px 6px;
  font-size: var(--text-sm); font-weight: normal; color: var(--body-text-color);
  background: var(--background-fill-primary); border: 1px solid var(--border-color-primary); border-radius: 4px; }
"""
# under each lesson's main button while the model is held: a student at a projector or on a phone sees why the button
# waits without hovering it (its hover gives the note's whole text). Laid over the page, not in its flow: the note
# comes and goes as the model is held and let go, and the page under it stays where it was
WAITS = "waits: the model is busy (see the note at the top)"


def route(config: AppConfig) -> Route:
    """The server's side: the note as HTML ("" while nothing holds the model), and the server's boot id (ui/alive.py).
    While the model loads the note is "" at once: the route answers on the server's event loop, which would wait for
    the load, and every page would read "not answering" until it ended."""

    async def note(request: Request) -> JSONResponse:
        return JSONResponse({"html": "" if loading() else html_of(server_note(config)), "boot": alive.BOOT})

    return Route(ROUTE, note, methods=["GET"])


def head(main_buttons: list[str]) -> str:
    """The page's side: ask (ui/alive.py's script, which also says when the server is not there), and write the note
    at the top and on each lesson's main button (its hover says why it waits)."""
    return (
        alive.head(ROUTE)
        + f"""<script>
(() => {{
  const BUTTONS = {json.dumps(main_buttons)};
  let shown = null;
  const show = (html) => {{
    if (html === shown) return;
    shown = html;
    const top = document.querySelector('#server-note');
    if (top) top.innerHTML = html;
    const why = html ? top.textContent.trim() : '';
    for (const b of document.querySelectorAll(BUTTONS.join(', '))) {{
      if (why) {{
        b.dataset.held = {json.dumps(WAITS)};
        b.title = why;
      }} else if (b.dataset.held) {{
        delete b.dataset.held;
        b.title = '';
      }}
    }}
  }};
  addEventListener('lab-server', (ev) => show(ev.detail.html || ''));
}})();
</script>"""
    )
