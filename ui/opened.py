"""A tab's setup (a shared link's preset, what the model reads, a class round to rejoin) runs the first time the
tab opens, not as every page loads.

Why: gradio 6's page keeps a loading status for every component that any event of the page has had as an input or
output (`loading_stati.current`), and at each status message of any later event (pending, started, done: about four
a click) it rewrites every one of them and hands each to its component again. A page-load event with fifteen outputs
makes every later click of that page pay for fifteen more components. The tabs' load events put about 45 components
there as the page opened, on every page, for tabs the student might never open. Measured on the Step tab (2-vCPU AMD
EPYC, Chromium 156, a Step on a settled page): the page's `update_loading_stati_state` took 68 ms a Step with them, 11
without.

How: a tab's wiring gets a `FirstOpen`, whose `click` listens to a hidden button (made on first use, one per tab
that has a setup) as the tab listened to the page load; the page's script (`script`) presses it once, when the tab
first shows, however it was opened (its title pressed, a shared link's ?tab=, a Start here plan's link, the
keyboard). The event still carries the page's address, so a handler reads the link's query as before.

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


def script(first_opens: list[FirstOpen], titles: dict[str, str]) -> str:
    """The page's script (a page-load js): presses `{id}-opened` once for each tab with a setup the first time it
    is selected (a `link_only` one only when the page's address has a link's query). `titles`: {tab id: its title}.
    The press waits for the button, should it not be drawn yet (at most 10 s)."""
    query = "[...new URLSearchParams(location.search).keys()]"
    ids = {titles[first.tab_id]: first.tab_id for first in first_opens if first.button is not None}
    link_only = [first.tab_id for first in first_opens if first.button is not None and first.link_only]
    return f"""() => {{
  const link = {query}.some(key => !{json.dumps(list(NOT_A_LINK))}.includes(key));
  const ids = {json.dumps(ids)};
  const done = new Set({json.dumps(link_only)}.filter(() => !link));
  const press = (id, tries) => {{
    const button = document.getElementById(`${{id}}-opened`);
    if (button) return button.click();
    if (tries < 200) setTimeout(() => press(id, tries + 1), 50);
  }};
  const look = () => {{
    for (const tab of document.querySelectorAll('#lab-tabs [role=tab][aria-selected=true]')) {{
      const id = ids[tab.textContent.trim()];
      if (id && !done.has(id)) {{ done.add(id); press(id, 0); }}
    }}
  }};
  const bar = document.querySelector('#lab-tabs');
  new MutationObserver(look).observe(bar, {{subtree: true, attributes: true, attributeFilter: ['aria-selected']}});
  look();
}}"""
