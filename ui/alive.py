"""Whether the server is there, as every page sees it, and why what a session had on it is gone.

The server holds every session's runs and class rounds in its own memory, and nothing is persisted: a server that
stops (a crash, a restart, a laptop closed) loses them all. A page cannot tell from its own clicks: gradio says
"connection lost" only for an event in flight, and after a restart the next click found no run and gave the reason
for an idle one ("may have expired after 30 idle minutes").

So the server has a boot id (`BOOT`), random per process start, and each page learns the one that served it. The page
asks the server's plain route (ui/server_note.py's, which answers the boot beside its note) every `EVERY_MS`, and
shows a banner at the top (`head`): "not answering; trying again…" as soon as one ask fails or takes longer than
`TIMEOUT_MS` (so a page notices within EVERY_MS + TIMEOUT_MS, 4.5 s), "answering again" when it answers, and, when the
answer comes with another boot id, that the server restarted and what that lost. Every gradio request the page sends
carries the page's boot id in a header (`HEADER`), so a handler knows whether its page was opened before a restart
(`page_restarted`), and `gone` says why a session's run or round is not there with that in mind.
"""

import json
import secrets

from ui.kit.request import current_request

BOOT = secrets.token_hex(6)  # this server process's: a page that sees another one knows the server restarted
HEADER = "x-lab-boot"  # the boot id of the server that served the page, on every gradio request the page sends
# how often a page asks whether the server is there. Measured on the 2-core machine (2 Dec 2026, other agents' work
# beside it): an ask takes 0.29 ms of the server's CPU (a class of 100: 50 asks a second, 1.5% of a core), and an idle
# Step page's main thread went from 127 to 215 ms a minute against the 5 s asks before (headless Chromium: a bare
# fetch every 2 s costs 80 ms a minute there on its own)
EVERY_MS = 2000
TIMEOUT_MS = 2500  # an ask unanswered this long counts as no answer
BACK_SHOWN_MS = 5000  # "answering again" stays this long; "restarted" stays until it is dismissed

DOWN = "The server is not answering; trying again…"
BACK = "The server is answering again."
RESTARTED = (
    "The server restarted: runs and class rounds on it were lost; press Prefill (or Start a round) to begin again."
)


def page_restarted() -> bool:
    """Whether the page that sent the event being handled was served by an earlier start of this server: its header
    names another boot. False outside an event, for a client that sends no header (an API client), and on plain
    gradio (ui/kit/request.py)."""
    request = current_request()  # the event's, as gradio holds it (ui/kit/request.py)
    headers = getattr(request, "headers", None) or {}
    page = headers.get(HEADER)
    return page is not None and page != BOOT


def gone(what: str, again: str, *, had: bool) -> str:
    """Why this session has no `what` ("run", "class round") on the server, the one rule for every lesson: the server
    restarted since its page was opened; or it had one (`had`) that was released, or freed or expired with nothing
    left to say so (the store says those two itself while it remembers: ui/sessions.py); or it never started one.
    `again` says what to do, e.g. "press Prefill to start one"."""
    if page_restarted():
        return (
            "the server restarted after this page was opened, and every run and class round on it was lost "
            f"(the server keeps them in its memory only): {again}"
        )
    if had:
        return f"this session's {what} is no longer on the server (it was released, freed or expired): {again}"
    return f"there is no {what} in this session yet: {again}"


# the banner: over the top of the page, in words a phone and a projector's back row read (its type grows with
# projector mode's, ui/projector.py); a polite live region, so a screen reader says it once, without interrupting
CSS = """
#lab-alive { position: fixed; top: 0; left: 0; right: 0; z-index: 1000; display: flex; gap: 12px; align-items: center;
  justify-content: center; padding: 8px 16px; font: 600 calc(17px * var(--lab-type, 1))/1.35
  system-ui, sans-serif; color: #fff; background: #9a3412; box-shadow: 0 2px 6px rgb(0 0 0 / 0.3); }
#lab-alive[hidden] { display: none; }
/* OK beside the words (two lines high on a projector); under them on a phone, where the words need the width */
@media (max-width: 600px) { #lab-alive { flex-wrap: wrap; } }
#lab-alive[data-state=back] { background: #166534; }
#lab-alive[data-state=restarted] { background: #1e3a8a; }
#lab-alive button { flex: none; min-height: 44px; min-width: 64px; padding: 0 14px; font: inherit; color: #1e3a8a;
  background: #fff; border: 0; border-radius: 6px; cursor: pointer; }
"""


def head(route: str) -> str:
    """The page's side: the banner, the asking, and the boot header on the page's gradio requests. What the server's
    route answered (its note among it) goes on to the page's other scripts as a `lab-server` event on window."""
    said = json.dumps({"down": DOWN, "back": BACK, "restarted": RESTARTED})
    return f"""<style>{CSS}</style>
<script>
(() => {{
  const BOOT = {json.dumps(BOOT)}, SAID = {said};
  // every gradio request of this page names the server start that served it (ui/alive.py, page_restarted)
  const send = window.fetch.bind(window);
  window.fetch = (input, init) => {{
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url, location.href);
    if (url.origin === location.origin && url.pathname.includes('/gradio_api/')) {{
      const headers = new Headers((init && init.headers) || (input instanceof Request ? input.headers : undefined));
      headers.set({json.dumps(HEADER)}, BOOT);
      init = {{...(init || {{}}), headers}};
    }}
    return send(input, init);
  }};
  let state = 'up', restarted = false, hide = null;
  const banner = () => {{
    let el = document.getElementById('lab-alive');
    if (!el) {{
      el = document.createElement('div');
      el.id = 'lab-alive';
      el.setAttribute('role', 'status');
      el.setAttribute('aria-live', 'polite');
      el.hidden = true;
      el.innerHTML = '<span></span><button type="button" hidden>OK</button>';
      el.querySelector('button').addEventListener('click', () => {{ el.hidden = true; }});
      document.body.appendChild(el);
    }}
    return el;
  }};
  const show = (now) => {{
    const el = banner();
    clearTimeout(hide);
    el.dataset.state = now;
    el.querySelector('span').textContent = SAID[now];
    el.querySelector('button').hidden = now !== 'restarted';
    el.hidden = false;
    if (now === 'back') hide = setTimeout(() => {{ el.hidden = true; }}, {BACK_SHOWN_MS});
  }};
  const answered = (d) => {{
    const other = d.boot !== BOOT;
    if (other && !restarted) {{
      restarted = true;
      show('restarted');
    }} else if (state === 'down') show(restarted ? 'restarted' : 'back');
    state = 'up';
    dispatchEvent(new CustomEvent('lab-server', {{detail: d}}));
  }};
  const missed = () => {{
    if (state !== 'down') show('down');
    state = 'down';
  }};
  let timer = null, asking = false;
  const ask = () => {{
    clearTimeout(timer);
    if (asking || document.visibilityState !== 'visible') return;
    asking = true;
    fetch({json.dumps(route)}, {{cache: 'no-store', signal: AbortSignal.timeout({TIMEOUT_MS})}})
      .then(r => (r.ok ? r.json() : Promise.reject(r.status)))
      .then(answered, missed)
      .finally(() => {{
        asking = false;
        timer = setTimeout(ask, {EVERY_MS});
      }});
  }};
  document.addEventListener('visibilitychange', () => {{ if (document.visibilityState === 'visible') ask(); }});
  document.readyState === 'loading' ? addEventListener('DOMContentLoaded', ask) : ask();
}})();
</script>"""
