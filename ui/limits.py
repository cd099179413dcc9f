"""What one request may ask of the server, and what the server's log keeps of it.

Anyone who can open the page can post to its routes, and one server holds the whole class, so:

- a body over `BODY_LIMIT` (`UPLOAD_LIMIT` for a file upload: a trace to replay) is refused with 413 before it is
  read whole: Starlette's `RequestBodyLimitMiddleware` refuses a Content-Length over the limit before reading, and
  counts a chunked body as it comes. The largest event a page sends is a 20,000-character prompt or grammar (a few
  tens of KB as JSON); a 20 MB body posted to an event was read whole, answered 500 and written to the log;
- a request the routes refuse before any handler runs (an event index that does not exist, a body that does not fit
  the event) is answered 400 and logs one line, its route, size and reason, not a traceback;
- the log holds no request body: any line longer than `LINE_LIMIT` characters is cut to its start and its length
  (gradio prints an input it refuses, such as a 300 KB dropdown value, inside its error's traceback).

`install()` sets the log's line cap; `app_kwargs()` is what `launch` hands the FastAPI app it makes (its public
`app_kwargs`).
"""

import io
import logging
import os
import sys

import pydantic
from starlette.middleware import Middleware
from starlette.middleware.body_limit import RequestBodyLimitMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

BODY_LIMIT = int(os.environ.get("DECODING_LAB_BODY_LIMIT", 1024 * 1024))  # bytes of any request's body
UPLOAD_LIMIT = 6 * 1024 * 1024  # a file upload: gradio's own 5 MB limit per file, and the form around it
UPLOAD_PATH = "/gradio_api/upload"
LINE_LIMIT = 1000  # characters of one line of the server's log
KEPT = 200  # characters kept of a longer line
# what a route raises for a request that names no event or does not fit one, before any handler runs
REFUSED = (KeyError, IndexError, ValueError, pydantic.ValidationError)

log = logging.getLogger("decoding_lab.requests")


class Limits:
    """The body limit for the request's path, and one line (not a traceback) for a request a route refuses."""

    def __init__(self, app: ASGIApp):
        self.events = RequestBodyLimitMiddleware(app, BODY_LIMIT)
        self.uploads = RequestBodyLimitMiddleware(app, UPLOAD_LIMIT)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.events(scope, receive, send)
        started = False

        async def sending(message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        limited = self.uploads if scope["path"].endswith(UPLOAD_PATH) else self.events
        try:
            await limited(scope, receive, sending)
        except REFUSED as err:
            if started:
                raise
            size = dict(scope.get("headers") or []).get(b"content-length", b"?").decode()
            reason = cut(f"{type(err).__name__}: {err}", KEPT)
            log.warning("refused %s %s (%s bytes): %s", scope["method"], scope["path"], size, reason)
            await JSONResponse({"error": f"bad request: {reason}"}, status_code=400)(scope, receive, send)


def app_kwargs() -> dict:
    return {"middleware": [Middleware(Limits)]}


def cut(line: str, keep: int = KEPT) -> str:
    return line if len(line) <= keep else f"{line[:keep]}… [{len(line):,} characters, cut]"


class CappedLines(io.TextIOBase):
    """A text stream that writes each line of at most `LINE_LIMIT` characters as it is, and a longer one cut."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        lines = text.split("\n")
        self.stream.write("\n".join(line if len(line) <= LINE_LIMIT else cut(line) for line in lines))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property
    def encoding(self):
        return self.stream.encoding


def install() -> None:
    """Cap the lines of the server's log (stderr, where tracebacks and uvicorn's log go, and stdout), and say the
    one-line refusals; before `launch`, so uvicorn's log handlers write through the cap."""
    if not isinstance(sys.stderr, CappedLines):
        sys.stderr = CappedLines(sys.stderr)
    if not isinstance(sys.stdout, CappedLines):
        sys.stdout = CappedLines(sys.stdout)
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        log.addHandler(handler)
        log.propagate = False
