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
"""

import json

import gradio as gr


class FirstOpen:
    """A tab's first opening, as an event a tab's wiring listens to (`click`, as gradio's listeners take it)."""

    def __init__(self, tab_id: str):
        self.tab_id = tab_id
        self.button: gr.Button | None = None  # made by the first listener: a tab without a setup has none

    def click(self, fn, inputs, outputs, **kwargs):
        if self.button is None:
            self.button = gr.Button(visible="hidden", elem_id=f"{self.tab_id}-opened")
        return self.button.click(fn, inputs, outputs, **kwargs)


def script(titles: dict[str, str]) -> str:
    """The page's script (a page-load js): presses `{id}-opened` once for each tab the first time it is selected.
    `titles`: {tab title: tab id} for the tabs with a setup. The press waits for the button, should it not be
    drawn yet (at most 10 s)."""
    return f"""() => {{
  const ids = {json.dumps(titles)};
  const done = new Set();
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
