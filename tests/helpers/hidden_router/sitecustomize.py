"""An app whose FastAPI has no `_IncludedRouter.original_router` as the kit knows it: tests/e2e/test_plain_e2e.py
starts the app with this folder first on PYTHONPATH, and Python imports this module as the interpreter starts. The
name the direct route looks for (ui/kit/direct_route.py, `INCLUDED`) is one no router has, as after a FastAPI that
renamed its private field: the app must still start, say so in one line, and answer every Step through gradio's
route."""

import ui.kit.direct_route as direct_route

direct_route.INCLUDED = "renamed_by_a_newer_fastapi"
