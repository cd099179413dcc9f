"""What the page runs before gradio's own scripts: a script placed first in the page's <head>.

gradio 6 lets an app add to the head only through its config, which its scripts read once they run, too late for
what must be in place before them. `first_in_head(app, html)` wraps gradio's page route so the page it answers
carries `html` first in its head.

LOADER_LOOP_ENDS ends a loop gradio 6 leaves running. Its status tracker redraws its elapsed-time counter on every
animation frame while its status is "pending", and stops when the status changes. The tracker shown while the app
loads is removed from the page while still pending, so its loop never stops: every page asks for a frame 60 times a
second for as long as it is open, even a bare gradio page with one checkbox. Each frame costs the page's main thread
(37-43 ms a second on the Step tab, measured with bench/browser_cost.py) and a student's laptop its battery, and a
click's answer lands among those frames. The tracker reads `requestAnimationFrame` once, as its module loads, so the
script wraps it before that: a loop that a status tracker started before the app was on the page (no `.contain` yet)
is the loader's, and it ends at its first frame once the app is there. Every other frame is asked for as before.
"""

from starlette.routing import BaseRoute

LOADER_LOOP_ENDS = """<script>
(() => {
  const frame = window.requestAnimationFrame.bind(window);
  let running = null;  // the loop whose frame callback runs now: a callback's own requests continue its loop
  window.labLoaderLoopsEnded = 0;
  window.requestAnimationFrame = callback => {
    const app = () => document.querySelector('.contain');
    const loop = running || {loader: !app() && (new Error().stack || '').includes('statustracker')};
    if (loop.loader && app()) {
      window.labLoaderLoopsEnded += 1;
      return 0;
    }
    return frame(time => {
      running = loop;
      try { callback(time); } finally { running = null; }
    });
  };
})();
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


def first_in_head(app, html: str = LOADER_LOOP_ENDS) -> None:
    """Wrap `app`'s page route (gradio's "/") so the page carries `html` first in its head."""
    routes = app.router.routes
    at = next(i for i, route in enumerate(routes) if getattr(route, "path", None) == "/")
    routes[at] = FirstInHead(routes[at], html)
