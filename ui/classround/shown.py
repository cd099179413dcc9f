"""What a student's page asks every few seconds: has what every student sees changed (the teacher's next step, the
kind, the settings, the reveal, the end)? A plain HTTP route (`ROUTE`, a GET with the round's code), not a gradio
event: an event costs the server about 10 ms of CPU (its queue, its session's stream, its status messages; gradio's
own plain API, /gradio_api/run, 90 ms: measured in docs/measurements/classround.md), a class of 100 asking every 3 s
would be thirty a second. When the answer differs from what the page's view shows, the page's script asks for the
view (one gradio event: ui/classround/script.py)."""

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from decoding.classround.codes import normal_code
from ui.classround import rounds

ROUTE = "/lab/classround/shown"


def shown(code) -> int:
    """The round's `shown` number (decoding.classround.round: it changes with what every student sees); -1 when there
    is no such round."""
    try:
        return rounds.find(normal_code(code)).shown
    except ValueError:
        return -1


def routes(config) -> list[Route]:
    """The tab's plain routes (ui/tabs.py, TabSpec.routes); `config` is unused: a round names its own model."""

    async def ask(request: Request) -> JSONResponse:
        return JSONResponse({"shown": shown(request.query_params.get("code"))})

    return [Route(ROUTE, ask, methods=["GET"])]
