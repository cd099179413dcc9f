"""The request of the event being handled, read without a `gr.Request` parameter.

gradio 6.31 sets `gradio.context.LocalContext.request` (a private context variable) around every handler it runs.
Reading it gives ui/alive.py's `page_restarted` the page's boot header without a `request: gr.Request` parameter
threaded through every handler that reads a run (the public way). On plain gradio (`DECODING_LAB_PLAIN=1`) no request
is read: a page that outlived a restart is told its run expired rather than that the server restarted.
"""

from ui.kit.switch import plain


def current_request():
    """The request of the event this thread handles; None outside an event, and on plain gradio (which imports
    nothing private for it)."""
    if plain():
        return None
    from gradio.context import LocalContext

    return LocalContext.request.get(None)
