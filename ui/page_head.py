"""The app's own head as two files the browser keeps.

The app's own head (its styles and scripts: projector mode, the charts' drawing, a plan's notice, the server's note,
about 19 KB) is served as two files, a style sheet and a script, named by a hash of what they hold and cached by the
browser for good (`cached`): given to gradio's `launch(head=...)`, it sat in every page's config, sent again with every
page a student opened, and read in again by the page's scripts. A page now carries two tags, first in its head; the
script, not deferred, runs before gradio's own, as a page's `<head>` scripts did.

With the kit (ui/kit/page_start.py) the two tags go first in each page's head, before gradio's scripts; on plain
gradio (`DECODING_LAB_PLAIN=1`) they go to `launch(head=...)`, which gradio's page adds once its scripts run.
"""

import hashlib
import re

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

STYLE = re.compile(r"<style>(.*?)</style>", re.S)
SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)
FILES = "lab/head"  # the files' path, relative to the page (every page sits one level under the app's root)
FOREVER = "public, max-age=31536000, immutable"  # a file's name changes with what it holds


def cached(head: str) -> tuple[str, list[Route]]:
    """`head` (only <style> and <script> elements, none with attributes) as the tags a page carries first in its
    head, and the routes that serve the two files they name."""
    css, js = "\n".join(STYLE.findall(head)), "\n".join(SCRIPT.findall(head))
    assert not SCRIPT.sub("", STYLE.sub("", head)).strip(), "the page's head holds something that is neither"
    files = {}
    for text, kind, media_type in ((css, "css", "text/css"), (js, "js", "text/javascript")):
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        files[kind] = (f"{FILES}.{digest}.{kind}", text.encode(), media_type)

    def serve(body: bytes, media_type: str):
        async def answer(request: Request) -> Response:
            return Response(body, media_type=f"{media_type}; charset=utf-8", headers={"Cache-Control": FOREVER})

        return answer

    routes = [Route(f"/{path}", serve(body, media_type), methods=["GET"]) for path, body, media_type in files.values()]
    tags = f'<link rel="stylesheet" href="{files["css"][0]}"><script src="{files["js"][0]}"></script>'
    return tags, routes
