"""A lesson's setup (a shared link's preset, what the model reads, a class round to rejoin) runs as its page opens,
through a hidden button the page presses, not as a page-load event.

Why: gradio 6's page keeps a loading status for every component that any event of the page has had as an input or
output (`loading_stati.current`), and at each status message of any later event (pending, started, done: about four
a click) it rewrites every one of them and hands each to its component again. A page-load event with fifteen outputs
makes every later click of that page pay for fifteen more components. When every lesson was a tab of one page, the
tabs' load events put about 45 components there as the page opened, for tabs the student might never open; a
lesson's own page still pays for its own. Measured on the Step tab (2-vCPU AMD EPYC, Chromium 156, a Step on a
settled page): the page's `update_loading_stati_state` took 68 ms a Step with them, 11 without.

How: a lesson's wiring gets a `FirstOpen`, whose `click` listens to a hidden button (made on first use, one per
lesson that has a setup) as it would listen to the page load; the page's script (`script`) presses it once, as the
lesson's page opens. The event still carries the page's address, so a handler reads the link's query as before.

A setup that only a link changes (`link_only`): a tab whose page is built with what its setup sets for a page with
no link needs no event on such a page, and the script presses its button only when the page's address asks for more
than a tab and projector mode. On the Step tab that kept its setup's twenty components out of every click's loading
statuses: 15 ms of the page's main thread a Step (bench/browser_cost.py).
"""

import json

import gradio as gr


class FirstOpen:
    """A tab's first opening, as an event a tab's wiring listens to (`click`, as gradio's listeners take it)."""

    def __init__(self, tab_id: str):
        self.tab_id = tab_id
        self.button: gr.Button | None = None  # made by the first listener: a tab without a setup has none
        self.link_only = True  # every listener's setup changes the page only for a link

    def click(self, fn, inputs, outputs, link_only: bool = False, **kwargs):
        """`link_only`: the page is built with what `fn` sets when the page's address has no query beyond `tab` and
        `projector` (a test of the tab checks it), so it runs only for a link."""
        if self.button is None:
            self.button = gr.Button(visible="hidden", elem_id=f"{self.tab_id}-opened")
        self.link_only = self.link_only and link_only
        return self.button.click(fn, inputs, outputs, **kwargs)


# what a page's address may say and still be a page with no link: the tab it opens and projector mode
NOT_A_LINK = ("tab", "projector")


def script(first_open: FirstOpen) -> str | None:
    """The lesson page's script (a page-load js): presses `{id}-opened` once as the page opens (a `link_only` setup
    only when the page's address has a link's query); None for a lesson without a setup. The press waits for the
    button, should it not be drawn yet (at most 10 s)."""
    if first_open.button is None:
        return None
    query = "[...new URLSearchParams(location.search).keys()]"
    return f"""() => {{
  const link = {query}.some(key => !{json.dumps(list(NOT_A_LINK))}.includes(key));
  if ({json.dumps(first_open.link_only)} && !link) return;
  const press = tries => {{
    const button = document.getElementById({json.dumps(f"{first_open.tab_id}-opened")});
    if (button) return button.click();
    if (tries < 200) setTimeout(() => press(tries + 1), 50);
  }};
  press(0);
}}"""
