"""What a round's pages ask, outside gradio's queue: has the round changed? The projector asks every quarter second
whether anything it shows changed (`version`: a draw, a guess, a join), a student's page every 3 s whether what every
student sees changed (`shown`: the teacher's next step, the kind, the settings, the reveal, the end). A plain HTTP
route (`ROUTE`, a GET with the round's code), not a gradio event: an event costs the server about 10 ms of CPU (its
queue, its session's stream, its status messages; gradio's own plain API, /gradio_api/run, 90 ms), this route 1 ms
(docs/measurements/classround.md). Only when the answer differs from what its view shows does a page ask for its view
(one gradio event: ui/classround/script.py), so a class that only looks costs the server next to nothing."""

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from decoding.classround.codes import normal_code
from ui.classround import rounds

ROUTE = "/lab/classround/shown"


def numbers(code) -> dict:
    """The round's `version` and `shown` (decoding.classround.round); -1 for both when there is no such round."""
    try:
        r = rounds.find(normal_code(code))
    except ValueError:
        return {"version": -1, "shown": -1}
    return {"version": r.version, "shown": r.shown}


def routes(config) -> list[Route]:
    """The tab's plain routes (ui/tabs.py, TabSpec.routes); `config` is unused: a round names its own model."""

    async def ask(request: Request) -> JSONResponse:
        return JSONResponse(numbers(request.query_params.get("code")))

    return [Route(ROUTE, ask, methods=["GET"])]
