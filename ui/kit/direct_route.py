"""gradio's route for the events that skip its queue, without FastAPI's work around it.

A click answered once skips gradio's queue (ui/events.py): the page posts it to `/gradio_api/run/predict`, naming
the event by its index, and gradio's `predict` answers it. Before `predict` runs, FastAPI matches the path against
the app's hundred-odd routes, validates the body, and solves the route's two dependencies (`login_check` and
`get_current_user`), each sync one in a thread of the thread pool, a hop there and back through the interpreter lock.
In a class of 100 (py-spy on the server, its samples that held the lock) that work outside `predict` took more of the
lock than `predict` itself, the handler included.

`route(app)` is the same path as a plain Starlette route, put before gradio's: it validates the body with gradio's
own model and calls gradio's own `predict` with it. The dependencies' answers are known where the app has no login
(no `auth`, no `auth_dependency`): `login_check` lets every request through and the user is None. With a login,
`route` returns None and gradio's route, with its checks, answers.

Where it cannot find gradio's endpoint (a FastAPI that renamed its private `_IncludedRouter.original_router`, a gradio
that moved its route), `route` logs one warning line and returns None: gradio's own route answers every event, a few
milliseconds slower, rather than the app failing at its start.
"""

import inspect
import logging

import pydantic
from fastapi.routing import APIRoute
from gradio.data_classes import PredictBody
from gradio.route_utils import API_PREFIX
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

PATH = f"{API_PREFIX}/run/{{api_name}}"
INCLUDED = "original_router"  # FastAPI's private field on an included router (fastapi.routing._IncludedRouter)
ARGUMENTS = {"api_name", "body", "request", "username"}  # what the route passes gradio's predict
log = logging.getLogger(__name__)


def gradio_predict(app):
    """gradio's own endpoint function for PATH (in its API router, which FastAPI keeps inside the app's routes)."""

    def routes(within):
        for r in within:
            yield r
            if hasattr(r, INCLUDED):  # an included router
                yield from routes(getattr(r, INCLUDED).routes)

    return next(r.endpoint for r in routes(app.routes) if isinstance(r, APIRoute) and r.path == PATH)


def route(app) -> Route | None:
    """The direct events' route for `app` (a launched gradio app), or None where the app has a login or gradio's own
    endpoint cannot be found (with a warning: gradio's route answers)."""
    if app.auth is not None or app.auth_dependency is not None:
        return None
    try:
        predict = gradio_predict(app)
    except StopIteration:
        log.warning(
            "direct route off: no route at %s found through FastAPI's %s; gradio's route answers", PATH, INCLUDED
        )
        return None
    if not set(inspect.signature(predict).parameters) >= ARGUMENTS:
        log.warning("direct route off: gradio's predict no longer takes %s; gradio's route answers", sorted(ARGUMENTS))
        return None

    async def run(request: Request):
        try:
            body = PredictBody.model_validate_json(await request.body())
        except pydantic.ValidationError as err:  # what FastAPI answers a body that does not fit
            return JSONResponse({"detail": err.errors(include_url=False, include_input=False)}, status_code=422)
        return await predict(api_name=request.path_params["api_name"], body=body, request=request, username=None)

    return Route(PATH, run, methods=["POST"])
