"""The kit: every workaround that reaches into a private part of gradio, FastAPI or Starlette, in one package,
installed from one function (`install`), and nowhere else in the app.

The lab is fast on two cores because it works around its framework in a few places, each measured (the table in
docs/architecture.md says what each buys, what breaks without it, and what to check on an upgrade;
tests/unit/test_upgrade.py reads every private name they rely on from the installed packages):
- queue_wake: gradio's queue woken by work instead of polling every millisecond;
- analytics: gradio's monitoring table rebuilt once every thousand events, not after each;
- session_state: a session's state made without copying every block's config;
- skips: an output an answer skips (`gr.skip()`) passed over on the server too;
- direct_route: the events that skip the queue answered without FastAPI's work around gradio's route;
- page_start: a script first in every page's head (the status trackers' frames, and the app's head files);
- charts: each plotly chart drawn once, on the chart that shows it, fitted to its room;
- navbar: gradio's navbar band hidden;
- slider: a slider's typed value let through to the handler's check (ui/validate.py);
- request: the event's request read without a `gr.Request` parameter (ui/alive.py).

`DECODING_LAB_PLAIN=1` (switch.py) runs the app on plain gradio with none of them: gradio's own queue, session
state, postprocessing and route; the app's head given to `launch(head=...)`; plotly drawn as gradio draws it (not
fitted to projector mode or a phone); gradio's navbar band; gradio's message for a typed value out of a slider's
range; and no "the server restarted" for a page that outlived a restart (its run reads as expired). It is how to tell
what a workaround still buys after an upgrade, and how to run the lab when one breaks. So that it runs when one
breaks, plain gradio imports none of the workarounds' modules (each is imported where it is installed): a name an
upgrade removed fails only the kit.
"""

from ui.kit.switch import plain


def head() -> str:
    """What the kit adds to the app's head (the charts' drawing, the navbar hidden); nothing on plain gradio."""
    if plain():
        return ""
    from ui.kit import charts, navbar

    return charts.HEAD + navbar.HEAD


def launch_head(tags: str) -> str | None:
    """gradio's `launch(head=...)` for the app's head `tags`: none with the kit, which puts them first in each page
    itself (`install`); on plain gradio, the tags, which gradio's page adds once its scripts run."""
    return tags if plain() else None


def install(demo, app, head_tags: str = "") -> None:
    """Install every workaround on `demo`, launched as `app` (before it has served an event), with the app's head
    `head_tags` first in each page; nothing on plain gradio. Call once."""
    if plain():
        return
    from ui.kit import analytics, direct_route, page_start, queue_wake, session_state, skips

    session_state.use()  # for every session gradio makes in this process
    skips.leave_skips(demo)
    queue = demo._queue  # gradio 6.31's attribute (tests/unit/test_upgrade.py checks it is still there)
    analytics.rebuild_rarely(queue)
    queue.sleep_when_free = queue_wake.POLL_S
    queue_wake.wake_on_work(queue)
    pages = [f"/{page}" for page, _, _ in demo.pages]
    page_start.first_in_head(app, pages, page_start.TRACKER_FRAMES + head_tags)
    if (direct := direct_route.route(app)) is not None:  # the Step tab's clicks, lighter than through FastAPI's
        app.router.routes.insert(0, direct)
