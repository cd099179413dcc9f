"""Start here, in headless Chromium on the bundled model: the app opens on it, its plans are links a click follows,
and every class plan, followed end to end, does what it says: each step's link opens its tab with its preset picked,
the step's action is done through the visible buttons, and its "notice" sentence is then true on the screen (the
text the step names matches its pattern)."""

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import ARTIFACTS, PROJECTOR, idle, new_page, until
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
        expect(page.get_by_role("tab", name="Start here")).to_have_attribute("aria-selected", "true")
        if viewport == PROJECTOR:  # the tab bar settles (fonts, projector mode) and then holds every title on one row
            wanted = f"{name}: every tab title on one row, none wrapped inside its tab"
            until(page, lambda page=page: one_row(page), 60, wanted)
        page.screenshot(path=str(ARTIFACTS / f"e2e-start-{name}.png"))
        page.close()
    # a step's link, clicked, opens its tab with its preset
    page = new_page(browser)
    page.goto(app_url)
    first = PLANS[0].steps[0]
    page.locator("#start-plans a").first.click()
    expect(page.get_by_role("tab", name=tab_of(first).title, exact=True)).to_have_attribute(
        "aria-selected", "true", timeout=120_000
    )
    assert page.url.endswith(first.link)
    page.close()


def one_row(page) -> bool:
    """Every tab's title on one row of the tab bar, none wrapped inside its tab (all at one top and one height)."""
    boxes = [tab.bounding_box() for tab in page.get_by_role("tab").all()]
    return len({box["y"] for box in boxes}) == 1 and len({box["height"] for box in boxes}) == 1


def says(page, step) -> bool:
    """The step's notice is true on the screen: the element it names shows text that matches its pattern."""
    return re.search(step.pattern, page.locator(step.shows).text_content()) is not None


@pytest.mark.parametrize("plan", PLANS, ids=[plan.title for plan in PLANS])
def test_a_class_plan_followed_end_to_end_shows_what_each_step_says_to_notice(browser, app_url, plan):
    page = new_page(browser)
    for k, step in enumerate(plan.steps, 1):
        page.goto(f"{app_url}{step.link}")
        tab = page.get_by_role("tab", name=tab_of(step).title, exact=True)
        expect(tab).to_have_attribute("aria-selected", "true", timeout=120_000)  # the link's tab, picked on load
        if step.preset:  # in the tab's preset dropdown, `<link id>-preset` (tests/unit/test_app_config.py)
            name = slugs(tab_of(step).presets)[step.preset]
            expect(page.locator(f"#{step.tab}-preset input")).to_have_value(name, timeout=120_000)
        idle(page)  # the preset's own event (a dropdown's change, a redraw) has ended
        for press in step.presses:
            page.click(press)
            idle(page, ACTION_S)
        until(page, lambda s=step: says(page, s), ACTION_S, f"step {k}: {step.notice}")
        page.locator(step.shows).scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"e2e-start-{plan.title.replace(' ', '-').lower()}-{k}.png"))
        if tab_of(step).stop:  # what the step left running, stopped once its notice is checked (as its words say)
            page.click(tab_of(step).stop)
            idle(page)
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
