"""What the page runs before gradio's own scripts: a script placed first in the page's <head>.

gradio 6 lets an app add to the head only through its config, which its scripts read once they run, too late for
what must be in place before them. `first_in_head(app, paths, html)` wraps gradio's page routes so the page it answers
carries `html` first in its head.

The app's own head rides on it (ui/page_head.py: two files a page names first in its head).

TRACKER_FRAMES mends two things in how gradio 6's status tracker asks for frames. The tracker redraws its
elapsed-time counter ("1.2s") on every animation frame while its status is "pending", and stops when the status
changes:
- the tracker shown while the app loads is removed from the page while still pending, so its loop never stops: every
  page asked for a frame 60 times a second for as long as it was open, even a bare gradio page with one checkbox
  (37-43 ms of main-thread time a second on the Step tab, bench/browser_cost.py, and a student's battery);
- while a click waits for its answer, each of its outputs' trackers asks for 60 frames a second to show a counter in
  tenths of a second, and each frame lays out and paints the page: a Step's 150 ms drew ten frames for it.
The tracker reads `requestAnimationFrame` once, as its module loads, so the script wraps it before that. A loop that a
status tracker started (its first request comes from the tracker's module) before the app was on the page (no
`.contain` yet) is the loader's, and it ends at its first frame once the app is there; any other tracker's loop gets
a frame every TRACKER_TICK_MS, as often as its counter changes, every tracker's in the same frame. Every other frame
is asked for as before.
"""

from starlette.routing import BaseRoute

TRACKER_TICK_MS = 100
TRACKER_FRAMES = f"""<script>
(() => {{
  const frame = window.requestAnimationFrame.bind(window);
  let running = null;  // the loop whose frame callback runs now: a callback's own requests continue its loop
  let ticking = [];  // the trackers' callbacks for the next tick, all run in one frame
  const app = () => document.querySelector('.contain');  // the app is on the page
  window.labLoaderLoopsEnded = 0;
  window.requestAnimationFrame = callback => {{
    let loop = running;
    if (!loop) {{
      const tracker = (new Error().stack || '').includes('statustracker');
      loop = {{tracker, loader: tracker && !app()}};
    }}
    if (loop.loader && app()) {{
      window.labLoaderLoopsEnded += 1;
      return 0;
    }}
    const run = time => {{
      running = loop;
      try {{ callback(time); }} finally {{ running = null; }}
    }};
    if (!loop.tracker || loop.loader) return frame(run);
    if (!ticking.length) setTimeout(() => {{
      const due = ticking;
      ticking = [];
      frame(time => due.forEach(run => run(time)));
    }}, {TRACKER_TICK_MS});
    ticking.push(run);
    return 0;  // a tracker never cancels its frame: its loop ends when its status changes
  }};
}})();
</script>"""


class FirstInHead(BaseRoute):
    """gradio's page route, answering GET with `html` placed first in the page's <head>."""

    def __init__(self, page: BaseRoute, html: str):
        self.page, self.html = page, html.encode()

    def matches(self, scope):
        return self.page.matches(scope)

    def url_path_for(self, name, /, **path_params):
        return self.page.url_path_for(name, **path_params)

    async def handle(self, scope, receive, send):
        if scope.get("method") != "GET":
            return await self.page.handle(scope, receive, send)
        start, body = None, []

        async def sending(message):
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            page = b"".join(body).replace(b"<head>", b"<head>" + self.html, 1)
            headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
            await send({**start, "headers": [*headers, (b"content-length", str(len(page)).encode())]})
            await send({"type": "http.response.body", "body": page})

        await self.page.handle(scope, receive, sending)


def first_in_head(app, paths: list[str], html: str = TRACKER_FRAMES) -> None:
    """Wrap `app`'s page routes (gradio's "/" and each page's "/<path>") so each page carries `html` first in its
    head."""
    routes = app.router.routes
    for path in paths:
        at = next(i for i, route in enumerate(routes) if getattr(route, "path", None) == path)
        routes[at] = FirstInHead(routes[at], html)
