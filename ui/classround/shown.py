"""What a round's pages ask, outside gradio's queue: has the round changed? The projector asks every quarter second
whether anything it shows changed (`version`: a draw, a guess, a join), a student's page every 3 s whether what every
student sees changed (`shown`: the teacher's next step, the kind, the settings, the reveal, the end). A plain HTTP
route (`ROUTE`, a GET with the round's code), not a gradio event: an event costs the server about 10 ms of CPU (its
queue, its session's stream, its status messages; gradio's own plain API, /gradio_api/run, 90 ms), this route 1 ms
(docs/measurements/classround.md). Only when the answer differs from what its view shows does a page ask for its view
(one gradio event: ui/classround/script.py), so a class that only looks costs the server next to nothing.

A student's page asks with its seat's `ping` as well (ui/classround/seats.py), hidden or not: that is how the round
hears the page is still open. A seat not heard from for a few seconds is counted out (decoding.classround.round), and
the projector's ask, four times a second, is what counts it out."""

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from decoding.classround.codes import normal_code
from ui.classround import rounds
from ui.classround.seats import SEATS

ROUTE = "/lab/classround/shown"


def numbers(code, ping=None) -> dict:
    """The round's `version` and `shown` (decoding.classround.round); -1 for both when there is no such round. With a
    seated student's `ping`: that student's page is heard from."""
    try:
        r = rounds.find(normal_code(code))
    except ValueError:
        return {"version": -1, "shown": -1}
    seat = SEATS.pinged(ping)
    if seat is not None and seat.code == r.code and seat.student is not None:
        r.heard(seat.student)
    else:
        r.sweep()
    return {"version": r.version, "shown": r.shown}


def routes(config) -> list[Route]:
    """The tab's plain routes (ui/tabs.py, TabSpec.routes); `config` is unused: a round names its own model."""

    async def ask(request: Request) -> JSONResponse:
        asked = request.query_params
        return JSONResponse(numbers(asked.get("code"), asked.get("seat")))

    return [Route(ROUTE, ask, methods=["GET"])]
