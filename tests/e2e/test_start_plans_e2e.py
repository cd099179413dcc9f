"""Start here, in headless Chromium on the bundled model: the app opens on it, its plans are links a click follows,
and every class plan, followed end to end, does what it says: each step's link opens its tab with its preset picked,
the step's action is done through the visible buttons, and its "notice" sentence is then true on the screen (the
text the step names matches its pattern) and in view at 1280x720 without the test scrolling, in normal and in
projector mode (the link brings it there, ui/start/notice.py)."""

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import ARTIFACTS, NAV_LINKS, PROJECTOR, current_lesson, idle, new_page, until
from ui.links import slugs
from ui.start.plans import PLANS
from ui.start.tab import tab_of

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
# s a step's action may take on a shared 2-core CPU: the longest is Prefill vs decode's Measure (about a minute alone)
ACTION_S = 600


def test_the_app_opens_on_start_here_with_one_row_of_tabs_and_its_links_open_their_steps(browser, app_url):
    ARTIFACTS.mkdir(exist_ok=True)
    for name, query, viewport in (
        ("1280x720", "?projector=0", PROJECTOR),
        ("projector", "?projector=1", PROJECTOR),
        ("800px", "?projector=0", {"width": 800, "height": 720}),
    ):
        page = new_page(browser, viewport)
        page.goto(f"{app_url}{query}")
        page.locator("#start-plans .plan").first.wait_for()
        expect(current_lesson(page)).to_have_text("Start here")
        if viewport == PROJECTOR:  # the navigation settles (fonts, projector mode) and then holds every title in view
            wanted = f"{name}: every lesson's link in view, none wrapped inside its link"
            until(page, lambda page=page: one_row(page), 60, wanted)
        page.screenshot(path=str(ARTIFACTS / f"e2e-start-{name}.png"))
        page.close()
    # a step's link, clicked, opens its tab with its preset
    page = new_page(browser)
    page.goto(app_url)
    first = PLANS[0].steps[0]
    page.locator("#start-plans a").first.click()
    expect(current_lesson(page)).to_have_text(tab_of(first).title, timeout=120_000)
    assert page.url.endswith(first.link)
    page.close()


def one_row(page) -> bool:
    """Every lesson's link in the window, none wrapped inside its link (all of one height)."""
    boxes = [link.bounding_box() for link in page.locator(NAV_LINKS).all()]
    width = page.viewport_size["width"]
    return all(b["x"] >= 0 and b["x"] + b["width"] <= width for b in boxes) and len({b["height"] for b in boxes}) == 1


# the notice's sentence (the smallest element inside `shows` whose text matches) on the screen: wholly inside the
# window, or, taller than it, filling at least half of it; outlined by the link's script as it landed
IN_VIEW = """([selector, pattern]) => {
  const re = new RegExp(pattern);
  let found = document.querySelector(selector);
  for (let inner = true; inner; ) {
    inner = false;
    for (const child of found.children) if (child.getClientRects().length && re.test(child.textContent)) {
      found = child;
      inner = true;
      break;
    }
  }
  const r = found.getBoundingClientRect();
  const seen = Math.min(r.bottom, innerHeight) - Math.max(r.top, 0);
  return {top: Math.round(r.top), bottom: Math.round(r.bottom), scrollY: Math.round(scrollY),
    inView: r.height <= innerHeight ? r.top >= 0 && r.bottom <= innerHeight : seen >= innerHeight / 2};
}"""


def in_view(page, step) -> dict:
    return page.evaluate(IN_VIEW, [step.shows, step.pattern])


def lands(page, step, k: int, mode: str) -> None:
    """The step's notice in view, as the page's script put it (polled: it lands a frame after the text appears and
    follows a layout that moves it for a few seconds); the test never scrolls."""
    try:
        until(page, lambda: in_view(page, step)["inView"], 30, "")
    except AssertionError:
        raise AssertionError(f"step {k} ({mode}): {step.shows} is not in view: {in_view(page, step)}") from None


def says(page, step) -> bool:
    """The step's notice is true on the screen: the element it names shows text that matches its pattern."""
    return re.search(step.pattern, page.locator(step.shows).text_content()) is not None


@pytest.mark.parametrize("plan", PLANS, ids=[plan.title for plan in PLANS])
def test_a_class_plan_followed_end_to_end_shows_what_each_step_says_to_notice(browser, app_url, plan):
    """Each step: its link, its presses, its notice true and in view; then projector mode switched (as a teacher does
    while it is read) and the notice in view again. Every other plan starts in projector mode and switches it off, so
    a step's action is done in each mode by some plan (each action done twice would double a 10-minute test)."""
    page = new_page(browser)
    first_mode = PLANS.index(plan) % 2 == 1
    for k, step in enumerate(plan.steps, 1):
        page.goto(f"{app_url}{step.link}&projector={int(first_mode)}")
        # the link's lesson, its own page
        expect(current_lesson(page)).to_have_text(tab_of(step).title, timeout=120_000)
        if step.preset:  # in the tab's preset dropdown, `<link id>-preset` (tests/unit/test_app_config.py)
            name = slugs(tab_of(step).presets)[step.preset]
            expect(page.locator(f"#{step.tab}-preset input")).to_have_value(name, timeout=120_000)
        idle(page)  # the preset's own event (a dropdown's change, a redraw) has ended
        for press in step.presses:
            page.click(press)
            idle(page, ACTION_S)
        until(page, lambda s=step: says(page, s), ACTION_S, f"step {k}: {step.notice}")
        if step.guess and not step.presses:  # the class guesses first: covered until the teacher presses it
            uncover(page, step)
        name = f"e2e-start-{plan.title.replace(' ', '-').lower()}-{k}"
        for projector in (first_mode, not first_mode):
            if projector != first_mode:
                box = page.locator("#projector input")
                box.check() if projector else box.uncheck()
                page.wait_for_function("on => document.body.classList.contains('projector') === on", arg=projector)
            mode = "projector" if projector else "normal"
            lands(page, step, k, mode)
            page.screenshot(path=str(ARTIFACTS / f"{name}-{mode}.png"))
        if tab_of(step).stop:  # what the step left running, stopped once its notice is checked (as its words say)
            page.click(tab_of(step).stop)
            idle(page)
    page.close()


def uncover(page, step, key: str | None = None) -> None:
    """A guess step's notice, covered as its link lands (its numbers blurred under "Guess first..."), shown by a press
    on it (a click, or `key` with the focus on it); its text says the notice all along."""
    covered = page.locator(f"{step.shows}[data-lab-guess]")
    covered.wait_for(timeout=ACTION_S * 1000)
    blur = page.evaluate("s => getComputedStyle(document.querySelector(s).firstElementChild).filter", step.shows)
    assert blur.startswith("blur("), blur
    if key:
        covered.focus()
        page.keyboard.press(key)
    else:
        covered.click()
    expect(covered).to_have_count(0)
    assert page.evaluate("s => getComputedStyle(document.querySelector(s).firstElementChild).filter", step.shows) in (
        "none",
        "",
    )


def test_a_guess_steps_notice_is_covered_until_the_teacher_presses_it(browser, app_url):
    step = next(step for plan in PLANS for step in plan.steps if step.guess and not step.presses)
    page = new_page(browser, {"width": 390, "height": 844})
    for key in (None, "Enter"):
        page.goto(f"{app_url}{step.link}&projector=0")
        until(page, lambda: says(page, step), ACTION_S, step.notice)
        uncover(page, step, key)
    page.goto(f"{app_url}{step.link.replace('guess=1', 'guess=0')}")  # a link without guess: shown as it lands
    until(page, lambda: says(page, step), ACTION_S, step.notice)
    lands(page, step, 1, "phone")
    assert page.locator(f"{step.shows}[data-lab-guess]").count() == 0
    page.close()


def test_a_links_preset_applies_as_picking_it_does_and_an_unknown_one_is_said(browser, app_url):
    page = new_page(browser)
    # the sandbox applies a pick on .input, which a value set by the page's load does not fire: its link draws it
    page.goto(f"{app_url}?tab=sandbox&preset=flat")
    expect(page.locator("#sandbox-logits textarea")).to_have_value("3 to 0 x 1000", timeout=120_000)
    expect(page.locator("#sandbox-measured")).to_contain_text("On these logits (1,000 tokens)", timeout=120_000)
    # a tab whose pick applies on .change: the preset's prompt is in place
    page.goto(f"{app_url}?tab=beams&preset=name-a-color")
    expect(page.locator("#beams-preset input")).to_have_value("name a color: the safe refusal", timeout=120_000)
    expect(page.get_by_label("Prompt", exact=True)).to_have_value("Name a color.", timeout=120_000)
    # an unknown name: the default stays, and the message line says which names there are
    page.goto(f"{app_url}?tab=beams&preset=nope")
    expect(page.locator("#beams-message")).to_contain_text("is not one of 2-2, open-ended-story", timeout=120_000)
    assert page.locator("#beams-preset input").input_value() == "2 + 2: a more probable answer"
    page.close()
