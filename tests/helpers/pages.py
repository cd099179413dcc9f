"""What a page of the app draws, read the way the browser tests read it: a chart's data and layout from plotly's own
graph div, and the controls driven as a person drives them (pick from a dropdown, type a number and press Enter)."""

import itertools

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from ui.launch import ROOT

ARTIFACTS = ROOT / "artifacts"  # the browser tests' screenshots

# a chart's series and its notes' text, from inside the element with this id: a plotly chart's traces (arrays made
# plain) from its graph div, or an HTML chart's (visuals.chart) from its bars, each of which says its series, x, y,
# hover numbers and look; for an HTML chart, `range` is its y axis and `title` its heading with the line under it
FIGURE = """
id => {
  const root = document.querySelector(`#${id}`);
  if (!root) return null;
  const gd = root.querySelector('.js-plotly-plot');
  if (gd && gd.data) {
    const plain = v => (ArrayBuffer.isView(v) ? Array.from(v) : v);
    return {
      data: gd.data.map(t => ({name: t.name, x: plain(t.x), y: plain(t.y), base: plain(t.base), xaxis: t.xaxis,
                               text: plain(t.text), mode: t.mode, marker: t.marker, customdata: t.customdata,
                               error_y: t.error_y})),
      annotations: ((gd.layout || {}).annotations || []).map(a => a.text),
      title: ((gd.layout || {}).title || {}).text || "",
    };
  }
  if (!root.querySelector('.lc')) return null;
  // a grid of panels reads as plotly's subplots: each panel's series on its own x axis (x, x2, x3...)
  const panels = [...root.querySelectorAll('.lc-panel')];
  const series = new Map();
  for (const e of root.querySelectorAll('[data-series]')) {
    const name = e.dataset.series, at = panels.indexOf(e.closest('.lc-panel'));
    const xaxis = at > 0 ? `x${at + 1}` : 'x';
    const empty = {name, xaxis, x: [], y: [], customdata: [], look: [], colour: []};
    if (!series.has(xaxis + name)) series.set(xaxis + name, empty);
    const s = series.get(xaxis + name);
    s.x.push(e.dataset.x);
    s.y.push(parseFloat(e.dataset.y));
    s.customdata.push(e.dataset.c ? JSON.parse(e.dataset.c) : null);
    s.look.push((e.className.match(/lc-(solid|pale|outline|tint|dashed)\\b/) || ['', ''])[1]);
    s.colour.push(e.style.getPropertyValue('--c').trim());
  }
  for (const s of series.values()) if (s.customdata.every(c => c === null)) s.customdata = null;  // marks, dots
  const plot = root.querySelector('.lc-plot');
  const style = plot ? getComputedStyle(plot) : null;
  const lines = e => [...e.children].map(c => c.textContent).join('\\n') || e.textContent;
  return {
    data: [...series.values()],
    annotations: [...root.querySelectorAll('.lc-note, .lc-empty p, .lc-panel-title')].map(lines),
    title: [...root.querySelectorAll('.lc-title')].map(e => e.textContent).join('\\n'),
    range: style ? [parseFloat(style.getPropertyValue('--lo')), parseFloat(style.getPropertyValue('--hi'))] : null,
    labels: [...root.querySelectorAll('.lc-x span')].map(e => e.textContent),
  };
}
"""


def figure(page, elem_id: str) -> dict | None:
    return page.evaluate(FIGURE, elem_id)


def wait_figure(page, elem_id: str, predicate: str, timeout: float = 60_000) -> dict:
    """Wait until `predicate` (a JS expression over `f`, the figure read as above) holds, then return the figure."""
    page.wait_for_function(
        f"id => {{ const f = ({FIGURE})(id); return f && ({predicate}); }}", arg=elem_id, timeout=timeout
    )
    return figure(page, elem_id)


def pick(page, elem_id: str, option) -> None:
    """Choose `option` (its whole name, or a pattern) in the dropdown with this id, as a person does: open it, click
    the option."""
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=option, exact=True).click()


def choose_preset(page, elem_id: str, preset: str, status_id: str) -> None:
    """Pick a preset in the dropdown with this id. A preset resets the lesson: wait until its status line (the
    element `status_id`) is cleared and no event is at work, before anything else is pressed."""
    pick(page, elem_id, preset)
    status = page.locator(f"#{status_id}")
    until(page, lambda: not status.inner_text().strip(), 60, f"the reset after picking {preset}")
    idle(page)


def tick(page, elem_id: str, option: str) -> None:
    """Pick `option` among the radio buttons with this id, and wait until the event it starts has ended."""
    page.locator(f"#{elem_id}").get_by_label(option, exact=True).check()
    idle(page)


def set_number(page, elem_id: str, value, *, holds: bool = True) -> None:
    """Type `value` into the number box of the slider or number field with this id and press Enter. A box drawn a
    moment ago (an accordion just opened) can take the keys before gradio listens to it and then puts its old value
    back: type again until the box keeps `value`. `holds=False` for a value out of the slider's range, which the box
    clamps on purpose."""
    box = page.locator(f"#{elem_id} input[type=number]")

    def typed() -> bool:
        box.fill(str(value))
        box.press("Enter")
        return not holds or box.input_value() == str(value)

    until(page, typed, 30, f"the {elem_id} box to keep {value}")


def until(page, check, timeout_s: float = 60, what: str = "the page to show it"):
    """Poll `check()` (it reads the page) until it returns something truthy, and return that: the page redraws when
    the server answers, and a loaded machine answers late. Fails naming `what` after `timeout_s`."""
    for _ in range(int(timeout_s * 10)):
        try:
            found = check()
        except (StopIteration, KeyError, TypeError, AttributeError):
            found = None  # not drawn yet
        if found:
            return found
        page.wait_for_timeout(100)
    raise AssertionError(f"waited {timeout_s:.0f} s for {what}")


# true while gradio shows an event at work, read from the DOM of gradio 6: a status tracker drawn and not showing an
# error (pending, or generating), an output it dims while pending (`.pending`: opacity 0.2), or a CSS transition still
# running (a dimmed output fades back to full opacity over 0.15 s after its event ends: text read then is paler), or a
# chart being drawn again for its room (ui/kit/charts.py: projector mode switched, a window narrowed to a phone's)
BUSY = """() =>
  [...document.querySelectorAll('[data-testid=status-tracker]')]
    .some(e => !e.classList.contains('hide') && !e.querySelector('.error, .validation-error'))
  || document.querySelector('.gradio-container .pending, .gradio-container .generating') !== null
  || document.getAnimations().some(a => a instanceof CSSTransition && a.playState === 'running')
  || window.labDrawing > 0"""


# true once BUSY has been false at every poll for `ms` in a row (the polls run in the page, so a renderer stalled by a
# loaded machine stalls them too, rather than counting as quiet); `token` starts a new count for each wait
QUIET_FOR = f"""([ms, token]) => {{
  const s = window.__labIdle || (window.__labIdle = {{}});
  if (s.token !== token) {{ s.token = token; s.since = null; }}
  if (({BUSY})()) {{ s.since = null; return false; }}
  const now = performance.now();
  if (s.since === null) s.since = now;
  return now - s.since >= ms;
}}"""
QUIET_MS = 200  # an event chained after another starts within a few ms of its end; a click is pending within a frame
_waits = itertools.count(1)  # each idle() its own token


def idle(page, timeout_s: float = 300) -> None:
    """Wait until no gradio event is at work, and none started in between, for QUIET_MS in a row, polled every 50 ms
    in the page: an event chained after another (`.then`, a `.change` its outputs fire) starts within a few ms of the
    last one's end, and a click becomes a pending event a moment after it lands. Call it before reading what an event
    could change."""
    try:
        page.wait_for_function(QUIET_FOR, arg=[QUIET_MS, next(_waits)], polling=50, timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        raise AssertionError(f"waited {timeout_s:.0f} s for every event on the page to finish") from None


PROJECTOR = {"width": 1280, "height": 720}  # the size every lesson is checked at
# ms an action (a click, a key) may take: playwright's 30 s default is too short on a 2-core machine where a model
# run beside the browser stalls the page's renderer for tens of seconds (a click on a tab, done at once, was still
# waiting for the renderer to confirm it after 30 s), so every browser test's page waits as long as for a server
ACTION_MS = 120_000


class LentPage:
    """The browser's one reused tab, lent to a test as a fresh page. A new tab starts a new renderer process, which
    parses and compiles gradio's scripts again (~3.5 s of the 2-core machine's CPU a page); a page loaded again in
    the same tab takes ~1.3 s. Each load is still its own gradio session. Everything a page is asked for is the
    tab's; `close()` clears what the app keeps in the browser (projector mode in localStorage) and leaves the app
    (about:blank), which ends the session as closing the tab would, and hands the tab back."""

    def __init__(self, page):
        self._page = page
        self.lent = False

    def __getattr__(self, name):
        return getattr(self._page, name)

    def lend(self) -> "LentPage":
        self.lent = True
        return self

    def close(self) -> None:
        if self._page.url.startswith("http"):
            self._page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        self._page.goto("about:blank")
        self.lent = False


_TABS: dict[int, LentPage] = {}  # each browser's reused tab, by id(browser)


def _opened(browser):
    """A new tab, whose actions wait ACTION_MS."""
    page = browser.new_page()
    page.set_default_timeout(ACTION_MS)
    return page


def new_page(browser, viewport: dict | None = None):
    """A fresh page (its own session) at `viewport` (the projector's size unless given), whose actions wait
    ACTION_MS: the browser's reused tab, or a new tab while that one is lent. The caller closes it."""
    tab = _TABS.get(id(browser))
    if tab is None:
        tab = _TABS[id(browser)] = LentPage(_opened(browser))
    page = _opened(browser) if tab.lent else tab.lend()
    page.set_viewport_size(viewport or PROJECTOR)
    return page


def listeners(page) -> int:
    """The page's event listeners, as Chrome counts them, after a garbage collection: what a page still holds."""
    cdp = page.context.new_cdp_session(getattr(page, "_page", page))  # a LentPage lends its tab
    try:
        cdp.send("HeapProfiler.collectGarbage")
        cdp.send("Performance.enable")
        metrics = cdp.send("Performance.getMetrics")["metrics"]
    finally:
        cdp.detach()
    return int(next(m["value"] for m in metrics if m["name"] == "JSEventListeners"))


NAV_LINKS = "#lab-nav nav a"  # the navigation's links, one a lesson, in teaching order (ui/pages.py)


def current_lesson(page):
    """The navigation's link to the page it is on: its text is the lesson's title."""
    return page.locator(f"{NAV_LINKS}[aria-current=page]")


def go_to(page, title: str) -> None:
    """Open the lesson titled `title` from the navigation, as a person does: on a phone, the Lessons menu first. The
    lesson's page is a new page, its own session."""
    menu = page.locator("#lab-nav summary")
    if menu.is_visible() and not page.locator("#lab-nav details").evaluate("d => d.open"):
        menu.click()
    with page.expect_navigation():
        page.locator("#lab-nav").get_by_role("link", name=title, exact=True).click()


def open_tab(browser, url: str, tab: str, ready: str | None = None, timeout: float = 60_000):
    """A fresh page (its own session) at the projector's size, on the lesson titled `tab` (its own page: `url` is
    the app's root), once `ready` (a selector) is drawn. The caller closes it."""
    from ui.pages import path_of
    from ui.tabs import specs

    page = new_page(browser)
    page.goto(url + path_of(next(spec for spec in specs() if spec.title == tab)))
    if ready:
        page.locator(ready).wait_for(timeout=timeout)
    return page


# the glossary's terms on screen inside an element, each as shown and with the explanation its hover gives
TERMS_IN = """
selector => [...document.querySelectorAll(`${selector} button.lab-term`)].filter(a => a.getClientRects().length)
  .map(a => ({shown: a.innerText, title: a.title, underlined: getComputedStyle(a).textDecorationLine}))
"""


def explained(page, selector: str, name: str) -> str:
    """Assert that the glossary term `name` is shown inside `selector`, dotted-underlined with its one-line explanation
    on hover (visuals.glossary), and return the words it is shown as."""
    from visuals.glossary import TERMS

    found = [t for t in page.evaluate(TERMS_IN, selector) if t["title"] == TERMS[name]]
    assert found, f"{name!r} is not explained in {selector}: {page.evaluate(TERMS_IN, selector)}"
    assert "underline" in found[0]["underlined"], found[0]
    return found[0]["shown"]


# how far two boxes on screen cover each other: both the width and the height of their common part over 1 px
OVERLAP = """(a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
  && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1"""

# a figure or axis title, or an x tick label, drawn over a plot area (its own or another subplot's), in the charts
# inside `root`
TEXTS_OVER_PLOTS = f"""
root => {{
  const overlap = {OVERLAP};
  const out = [];
  for (const plot of document.querySelectorAll(`${{root}} .js-plotly-plot`)) {{
    const areas = [...plot.querySelectorAll('.nsewdrag')].map(e => e.getBoundingClientRect());
    for (const t of plot.querySelectorAll('.infolayer text[class$="title"], .xtick text')) {{
      const b = t.getBoundingClientRect();
      if (b.width && b.height && areas.some(a => overlap(a, b))) out.push(`"${{t.textContent}}" over a plot area`);
    }}
  }}
  return out;
}}
"""


def texts_over_plots(page, root: str = "body") -> list[str]:
    """Each chart title, axis title or x tick label inside `root` that covers a plot area, as text (none: [])."""
    return page.evaluate(TEXTS_OVER_PLOTS, root)


# where a chart's dashed lines, as drawn (straight between their points, in pixels), run through a note's box
DASHES_UNDER_NOTES = """
id => {
  const gd = document.querySelector(`#${id} .js-plotly-plot`);
  const [xa, ya] = [gd._fullLayout.xaxis, gd._fullLayout.yaxis];
  const svg = gd.querySelector('.main-svg').getBoundingClientRect();
  const notes = [...gd.querySelectorAll('.infolayer .annotation')].map(a => [a.textContent, a.getBoundingClientRect()]);
  const hits = [];
  for (const t of gd._fullData.filter(t => t.line && t.line.dash === 'dash' && t.visible === true)) {
    const px = [...t.x].map((x, i) => [svg.left + xa._offset + xa.d2p(x), svg.top + ya._offset + ya.d2p(t.y[i])]);
    for (let i = 0; i + 1 < px.length; i++)
      for (let s = 0; s <= 50; s++) {
        const [x, y] = [0, 1].map(k => px[i][k] + (s / 50) * (px[i + 1][k] - px[i][k]));
        for (const [text, b] of notes)
          if (x > b.left && x < b.right && y > b.top && y < b.bottom) hits.push(`"${t.name}" runs through "${text}"`);
      }
  }
  return [...new Set(hits)];
}
"""


def dashes_under_notes(page, elem_id: str) -> list[str]:
    """Each dashed line of the chart with this id that runs through one of its notes (none: [])."""
    return page.evaluate(DASHES_UNDER_NOTES, elem_id)


# each slider's end labels (its minimum and maximum) that run past the edge of the slider's own box
SLIDER_ENDS_CUT = """
() => [...document.querySelectorAll('input[type=range]')].filter(r => r.getClientRects().length).flatMap(r => {
  const block = r.closest('.block'), box = block.getBoundingClientRect();
  return [...block.querySelectorAll('.min_value, .max_value')].map(e => [e.innerText, e.getBoundingClientRect()])
    .filter(([, b]) => b.left < box.left - 1 || b.right > box.right + 1).map(([text]) => `${text} cut off`);
})
"""


def slider_ends_cut(page) -> list[str]:
    """Each visible slider's minimum or maximum label drawn past the slider's box (none: [])."""
    return page.evaluate(SLIDER_ENDS_CUT)


# every text box drawn inside a chart that could collide: figure and axis titles, annotations, legend entries and
# their symbols, the words on bars
TEXTS_OVER_TEXTS = f"""
() => {{
  const overlap = {OVERLAP};
  const out = [];
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {{
    const texts = ['.infolayer .annotation-text', '.infolayer text[class$="title"]', '.legendtext', '.legendpoints',
      'text.bartext'].join(', ');
    const boxes = [...plot.querySelectorAll(texts)]
      .map(t => [t.textContent, t.getBoundingClientRect()]).filter(([, b]) => b.width > 0 && b.height > 0);
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++)
        if (overlap(boxes[i][1], boxes[j][1])) out.push(`"${{boxes[i][0]}}" over "${{boxes[j][0]}}"`);
  }}
  return out;
}}
"""


def texts_over_texts(page) -> list[str]:
    """Each pair of a chart's texts (titles, axis titles, notes, legend entries, bar words) drawn over each other."""
    return page.evaluate(TEXTS_OVER_TEXTS)


# each text of a chart (titles, notes, legend entries, bar words) drawn past the chart's edge, where it is cut off
TEXTS_CUT = """
root => [...document.querySelectorAll(`${root} .js-plotly-plot`)].flatMap(plot => {
  const svg = plot.querySelector('.main-svg');
  if (!svg || !svg.getClientRects().length) return [];
  const box = svg.getBoundingClientRect();
  return [...plot.querySelectorAll('.infolayer text, text.bartext')]
    .map(t => [t.textContent, t.getBoundingClientRect()])
    .filter(([, b]) => b.width && (b.left < box.left - 1 || b.right > box.right + 1 || b.top < box.top - 1
      || b.bottom > box.bottom + 1))
    .map(([text]) => `"${text}" cut off at the chart's edge`);
})
"""


def texts_cut(page, root: str = "body") -> list[str]:
    """Each chart text inside `root` drawn past its chart's edge (none: [])."""
    return page.evaluate(TEXTS_CUT, root)


# each chart drawn wider than the box it sits in, where its right side is cut off: it was laid out for another size
# (a chart is laid out again when the window's size changes; projector mode's zoom changes the box's size alone)
CHARTS_PAST_THEIR_BOX = """
() => [...document.querySelectorAll('.js-plotly-plot')].filter(gd => gd.getClientRects().length).flatMap(gd => {
  const svg = gd.querySelector('.main-svg'), box = gd.closest('.block');
  if (!svg || !box) return [];
  const [s, b] = [svg.getBoundingClientRect(), box.getBoundingClientRect()];
  const id = (gd.closest('[id]') || {}).id;
  return s.right > b.right + 1 ? [`the chart in #${id} is drawn ${Math.round(s.right - b.right)} px past its box`] : [];
})
"""


def charts_past_their_box(page) -> list[str]:
    return page.evaluate(CHARTS_PAST_THEIR_BOX)


def not_drawn_whole(page) -> list[str]:
    """What a person would see go wrong in the charts and sliders on screen: chart text cut at the chart's edge, over
    another text or over a plot area, a chart wider than its box, and slider ends cut off (none: [])."""
    return (
        charts_past_their_box(page)
        + texts_cut(page)
        + texts_over_texts(page)
        + texts_over_plots(page)
        + slider_ends_cut(page)
    )


# the control's box, and the chart's data: its plot areas and x-axis labels (a title above them, a legend below, may
# run past the screen's edge), as [top, bottom] on screen
ON_SCREEN = """
([control, chart]) => {
  const span = es => es.map(e => e.getBoundingClientRect()).filter(b => b.height > 0)
    .reduce(([top, bottom], b) => [Math.min(top, b.top), Math.max(bottom, b.bottom)], [Infinity, -Infinity]);
  const data = [...document.querySelectorAll(`${chart} .nsewdrag, ${chart} .xtick text`)];
  return {control: span([document.querySelector(control)]), chart: span(data), height: innerHeight};
}
"""


def shares_the_screen(page, control: str, chart: str) -> dict:
    """Scroll as a teacher does, to the control at the top of the screen; then where the control and the chart are."""
    page.locator(control).evaluate("e => scrollBy(0, e.getBoundingClientRect().top - 8)")
    where = page.evaluate(ON_SCREEN, [control, chart])
    where["fits"] = all(where[k][0] >= 0 and where[k][1] <= where["height"] for k in ("control", "chart"))
    return where
