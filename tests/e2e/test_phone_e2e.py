"""Every tab on a 390x844 phone, in headless Chromium on the bundled model: opened from the tab bar, and again after
its main action (tests/helpers/actions.py), no visible text ends past the screen's right edge (a table or a row that
scrolls sideways inside its own box may hold more), no two texts of a chart are drawn over each other (plotly's and
the HTML charts'), and no chart toolbar is drawn (a tap showed plotly's over the title). On Step by step, the
temperature starts within one and a half screens of the Step button, and a bad top-k's message is beside its box
(within 80 px). Full-page screenshots of each tab go to artifacts/."""

import pytest
from playwright.sync_api import expect

from tests.helpers.actions import act
from tests.helpers.pages import ARTIFACTS, current_lesson, go_to, idle, new_page, set_number, texts_over_texts, until
from ui.tabs import specs

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

PHONE = {"width": 390, "height": 844}

# each visible text (a run of words in one text node, or a chart's SVG text) whose box ends past the window's right
# edge (cut off, or clipped there by gradio's container), unless an element around it scrolls sideways (a finger
# reaches it there)
PAST_THE_EDGE = """() => {
  const width = document.documentElement.clientWidth;
  const held = e => {
    for (let a = e; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (['auto', 'scroll'].includes(s.overflowX) && a.scrollWidth > a.clientWidth) return true;
    }
    return false;
  };
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const e = node.parentElement;
    if (!node.textContent.trim() || !e || ['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(e.tagName)) continue;
    if (!e.getClientRects().length || getComputedStyle(e).visibility !== 'visible') continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const right = Math.max(...[...range.getClientRects()].map(r => (r.width > 0 ? r.right : 0)));
    const words = node.textContent.trim().slice(0, 40);
    if (right > width + 1 && !held(e)) out.push(`"${words}" ends at ${Math.round(right)}`);
  }
  return [...new Set(out)];
}"""

# each pair of an HTML chart's texts (visuals.chart: title, legend, axis labels, bar words) drawn over each other
HTML_CHART_TEXTS_OVER = """() => {
  const out = [];
  for (const chart of document.querySelectorAll('.lc')) {
    if (!chart.getClientRects().length) continue;
    const boxes = [...chart.querySelectorAll('*')]
      .filter(e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
      .map(e => [e.textContent.trim(), e.getBoundingClientRect(), e]).filter(([, b]) => b.width > 0 && b.height > 0);
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i][1], boxes[j][1]];
        // a word inside a sentence (a glossary term in a title) is part of it, not over it
        if (boxes[i][2].contains(boxes[j][2]) || boxes[j][2].contains(boxes[i][2])) continue;
        if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
            && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1)
          out.push(`"${boxes[i][0].slice(0, 30)}" over "${boxes[j][0].slice(0, 30)}"`);
      }
  }
  return out;
}"""

TOOLBARS = "() => [...document.querySelectorAll('.modebar')].filter(e => e.getClientRects().length).length"

# each dropdown whose chosen value is written under its arrow (gradio draws the arrow over the box's last 40 px), and
# each whose value shows fewer than 12 characters before it is cut
UNDER_THE_ARROW = """() => [...document.querySelectorAll('input[role=combobox]')].filter(i => i.getClientRects().length)
  .filter(i => {
    const arrow = i.parentElement.querySelector('.icon-wrap');
    const s = getComputedStyle(i), written = i.getBoundingClientRect().right - parseFloat(s.paddingRight);
    const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    const roomy = room > 12 * parseFloat(s.fontSize) / 2;  // 12 characters of about half an em
    return (arrow && written > arrow.getBoundingClientRect().left) || !roomy;
  }).map(i => i.getAttribute('aria-label'))"""


def problems(page) -> dict:
    found = {
        "past the right edge": page.evaluate(PAST_THE_EDGE),
        "chart texts over each other": texts_over_texts(page) + page.evaluate(HTML_CHART_TEXTS_OVER),
        "toolbars": page.evaluate(TOOLBARS),
        "a dropdown's value under its arrow, or cut short": page.evaluate(UNDER_THE_ARROW),
    }
    return {k: v for k, v in found.items() if v}


def open_from_the_tab_bar(page, title: str) -> None:
    """Open the lesson as a thumb does: the Lessons menu, then its title (tests.helpers.pages.go_to)."""
    go_to(page, title)
    expect(current_lesson(page)).to_have_text(title)
    idle(page)


@pytest.mark.parametrize("tab", specs(), ids=lambda tab: tab.id)
def test_on_a_phone_each_tab_keeps_its_text_on_screen_and_its_chart_texts_apart(browser, app_url, tab):
    ARTIFACTS.mkdir(exist_ok=True)
    page = new_page(browser, PHONE)
    page.goto(f"{app_url}?projector=0")
    page.locator("#start-plans .plan").first.wait_for()
    open_from_the_tab_bar(page, tab.title)
    found = {"opened": problems(page)}
    page.screenshot(path=str(ARTIFACTS / f"e2e-phone-{tab.id}.png"), full_page=True)
    if tab.chart:
        act(page, tab)
        until(page, lambda: page.locator(tab.chart).is_visible(), 300, f"{tab.chart} drawn")
        idle(page, 600)
        found["after its action"] = problems(page)
        page.screenshot(path=str(ARTIFACTS / f"e2e-phone-{tab.id}-after.png"), full_page=True)
    if tab.stop:
        page.click(tab.stop)
        idle(page)
    page.close()
    assert {when: p for when, p in found.items() if p} == {}


# where an element starts in the page (its top, in px from the page's top)
TOP = "s => document.querySelector(s).getBoundingClientRect().top + scrollY"


def test_on_a_phone_the_temperature_is_near_step_and_a_bad_top_k_is_told_beside_its_box(browser, app_url):
    page = new_page(browser, PHONE)
    page.goto(f"{app_url}?tab=step&projector=0")
    page.locator("#step-step").wait_for()
    idle(page)
    below = page.evaluate(TOP, "#step-temperature") - page.evaluate(TOP, "#step-step")
    assert 0 < below <= 1.5 * PHONE["height"], f"the temperature starts {below:.0f} px below Step"
    box = page.get_by_label("number input for Top-k")
    box.fill("2.5")
    box.press("Enter")
    # the handler's message, shown beside the box it names (ui/validate.py): inside the Top-k slider's block
    message = page.locator("div.block:has(input[aria-label='number input for Top-k']) > .lab-beside")
    until(page, lambda: "Top-k must be a whole number" in " ".join(message.all_inner_texts()), 60, "the message")
    gap = page.evaluate(
        """() => {
          const b = document.querySelector("input[aria-label='number input for Top-k']");
          const m = b.closest('div.block').querySelector(':scope > .lab-beside').getBoundingClientRect();
          const r = b.getBoundingClientRect();
          return Math.max(r.top - m.bottom, m.top - r.bottom, 0);
        }"""
    )
    page.screenshot(path=str(ARTIFACTS / "e2e-phone-step-top-k.png"))
    page.close()
    assert gap <= 80, f"the message is {gap:.0f} px from the box"


# every control drawn on the page smaller than 24x24 CSS px (WCAG 2.5.8), and the box of each main button: what a
# thumb must hit. A glossary term and a link inside a sentence are the sentence's words (2.5.8's inline exception)
TARGETS = """main => {
  const controls = 'button, input:not([type=hidden]), select, textarea, [role=button], [role=radio], [role=checkbox], '
    + '[role=switch], summary, .label-wrap';
  const inline = e => e.matches('.lab-term, .prose a, p a, li a') || e.closest('.lab-term');
  const small = [];
  for (const e of document.querySelectorAll(controls)) {
    if (!e.getClientRects().length || inline(e) || getComputedStyle(e).visibility !== 'visible') continue;
    const r = e.getBoundingClientRect();
    const name = (e.id ? '#' + e.id : '') + ' ' + e.tagName.toLowerCase() + (e.type ? `[${e.type}]` : '')
      + ` "${(e.innerText || e.value || e.ariaLabel || '').trim().slice(0, 20)}"`;
    if (r.width < 24 - 0.5 || r.height < 24 - 0.5) small.push(`${name} ${Math.round(r.width)}x${Math.round(r.height)}`);
  }
  // a main button (the sandbox's main control is its temperature slider, held to 24x24 like every control)
  const mains = [...document.querySelectorAll(main)].filter(e => e.getClientRects().length && e.matches('button'));
  const heights = mains.map(e => Math.round(e.getBoundingClientRect().height));
  return {small: [...new Set(small)], heights};
}"""


@pytest.mark.parametrize("tab", specs(), ids=lambda spec: spec.id)
def test_on_a_phone_no_control_is_under_24px_and_the_main_button_is_44px_tall(browser, app_url, tab):
    page = new_page(browser, PHONE)
    page.goto(f"{app_url}?tab={tab.id}&projector=0")
    page.locator(f"{tab.main} >> visible=true").first.wait_for(timeout=120_000)
    idle(page)
    found = page.evaluate(TARGETS, tab.main)
    page.close()
    assert found["small"] == [], f"{tab.id}: controls under 24x24 px at 390 px: {found['small']}"
    if tab.id not in ("start", "sandbox"):  # Start here's main is a link in a sentence, the sandbox's a slider
        assert found["heights"] and min(found["heights"]) >= 44, f"{tab.id}: main button heights {found['heights']}"


# where the chart's title, its tallest bar and the three knobs' boxes are on screen, and the top of the knobs' bar
SHARED_SCREEN = """() => {
  const box = s => { const e = document.querySelector(s); if (!e || !e.getClientRects().length) return null;
                     const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom}; };
  const bars = [...document.querySelectorAll('#step-dist .lc-bar')].map(e => e.getBoundingClientRect())
    .filter(b => b.height > 0);
  const tallest = bars.length ? bars.reduce((a, b) => (b.height > a.height ? b : a)) : null;
  return {
    title: box('#step-dist .lc-title'),
    tallest: tallest && {top: tallest.top, bottom: tallest.bottom},
    knobs: box('#step-knobs'),
    boxes: Object.fromEntries(['step-temperature', 'step-top-k', 'step-top-p']
      .map(id => [id, box(`#${id} input[type=number]`)])),
    height: innerHeight,
    view: (document.querySelector('#step-dist .step-drawn') || {dataset: {}}).dataset.view,
  };
}"""


def chart_and_knobs_apart(where: dict) -> list[str]:
    """What of the chart's title and top bar, and of the knobs' boxes, is off screen or under the knobs' bar."""
    floor, out = where["knobs"]["top"], []
    for name, b in (("the chart's title", where["title"]), ("its tallest bar's top", where["tallest"])):
        if b is None or b["top"] < 0 or (b["bottom"] if name == "the chart's title" else b["top"]) > floor:
            out.append(f"{name} at {b} (the knobs' bar from {floor:.0f})")
    for name, b in where["boxes"].items():
        if b is None or b["top"] < 0 or b["bottom"] > where["height"]:
            out.append(f"{name}'s box at {b} on a {where['height']} px screen")
    return out


def test_on_a_phone_the_chart_and_its_three_knobs_share_the_screen_after_prefill_each_step_and_a_new_temperature(
    browser, app_url
):
    """At 390x844, with no scrolling by the student: after Prefill, after a Step, and after the temperature is changed
    in its box, the chart's title and its tallest bar are on screen above the knobs' bar, and temperature, top-k and
    top-p are on screen with it."""
    page = new_page(browser, PHONE)
    page.goto(f"{app_url}?tab=step&projector=0")
    page.locator("#step-prefill").wait_for()
    idle(page)
    seen = {}
    page.click("#step-prefill")
    until(page, lambda: page.evaluate(SHARED_SCREEN)["view"], 120, "the chart after Prefill")
    idle(page)
    seen["after Prefill"] = page.evaluate(SHARED_SCREEN)
    page.screenshot(path=str(ARTIFACTS / "e2e-phone-step-prefill.png"))
    page.click("#step-step")
    until(page, lambda: page.locator("#step-dist .lc-title").inner_text().startswith("step 1"), 60, "the Step")
    idle(page)
    seen["after a Step"] = page.evaluate(SHARED_SCREEN)
    before = seen["after a Step"]["view"]
    set_number(page, "step-temperature", 1.5)
    until(page, lambda: page.evaluate(SHARED_SCREEN)["view"] != before, 60, "the chart redrawn at temperature 1.5")
    idle(page)
    seen["after temperature 1.5"] = page.evaluate(SHARED_SCREEN)
    page.screenshot(path=str(ARTIFACTS / "e2e-phone-step-temperature.png"))
    page.close()
    assert {when: chart_and_knobs_apart(where) for when, where in seen.items()} == {when: [] for when in seen}, seen
