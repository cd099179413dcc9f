"""How far a Prefill has read its prompt, for the page that waits for it: a long prompt goes through the scheduler in
chunks (seconds for thousands of tokens on a CPU), and its answer comes once, at the end (a click answered once,
off gradio's queue, sends no progress). So the page asks a plain route while it waits, by an id its own script made
(`PageState.asks`, sent with the Prefill), and draws "reading the prompt: 1,024 of 3,004 tokens" over the chart it
will replace. Only how far: nothing of the prompt or the run is kept here."""

import re
import threading
from collections import OrderedDict
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

ROUTE = "/lab/step/reading"
KEPT = 512  # prompts being read at once, at most (the oldest forgotten first): a class of 100 pressing Prefill together
_ID = re.compile(r"[a-z0-9]{8,40}")  # what the page's script makes (ui/step/page_state.py, WRITE_JS)
_READ: OrderedDict[str, tuple[int, int]] = OrderedDict()
_LOCK = threading.Lock()


def teller(asks: str) -> Callable[[int, int], None] | None:
    """What the scheduler tells after each chunk of this page's prompt (`told(read, of)`); None for no id (an API
    caller), or an id the page's script could not have made."""
    if not _ID.fullmatch(asks or ""):
        return None

    def told(read: int, of: int) -> None:
        with _LOCK:
            _READ[asks] = (read, of)
            _READ.move_to_end(asks)
            while len(_READ) > KEPT:
                _READ.popitem(last=False)

    return told


def forget(asks: str) -> None:
    """The Prefill answered (read, stopped or refused): nothing more to tell."""
    with _LOCK:
        _READ.pop(asks, None)


def read(asks: str | None) -> dict:
    """{"read": tokens read so far, "of": the prompt's}, or {} when nothing is being read under that id."""
    with _LOCK:
        found = _READ.get(asks or "")
    return {"read": found[0], "of": found[1]} if found else {}


def routes(config) -> list[Route]:
    """The tab's plain route (ui/tabs.py, TabSpec.routes); `config` is unused."""

    async def ask(request: Request) -> JSONResponse:
        return JSONResponse(read(request.query_params.get("asks")))

    return [Route(ROUTE, ask, methods=["GET"])]


# the page's side: while a Prefill waits (the stage's full status shows), ask every 300 ms and write how far on the
# status, whose ::before shows it (ui/step/tab.py, STALE)
JS = f"""
document.addEventListener('click', (ev) => {{
  if (!(ev.target.closest && ev.target.closest('#step-prefill'))) return;
  const asks = (window.__stepPage || {{}}).asks;
  if (!asks) return;
  const tracker = () => document.querySelector('#step-stage [data-testid=status-tracker]');
  const waiting = () => {{
    const t = tracker();
    return t && t.classList.contains('full') && !t.classList.contains('hide');
  }};
  if (tracker()) delete tracker().dataset.reading;
  let asked = 0;
  const ask = async () => {{
    if (!waiting() && ++asked > 3) return;  // answered (or never long enough to show its status)
    try {{
      const r = await (await fetch('{ROUTE}?asks=' + asks, {{cache: 'no-store'}})).json();
      const t = tracker();
      if (t && r.of) t.dataset.reading =
        `reading the prompt: ${{r.read.toLocaleString('en')}} of ${{r.of.toLocaleString('en')}} tokens`;
    }} catch (e) {{}}
    setTimeout(ask, 300);
  }};
  setTimeout(ask, 300);
}}, true);
"""
