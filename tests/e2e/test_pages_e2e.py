"""One lesson, one page (ui/pages.py): the navigation reaches every lesson in one click on a 1280x720 projector, in
either mode, and in two taps on a 390x844 phone, all of it in view; projector mode carries over from page to page;
every link already sent to a class (`/?tab=<id or old id>&preset=...&notice=...`) lands on its lesson's page, its
preset picked and its notice asked for. Each page is photographed as it lands (artifacts/pages/), at 1280x720 in both
modes, at 800 px and at 390x844, to be looked at."""

from urllib.parse import parse_qs, urlparse

from playwright.sync_api import expect

from tests.helpers.pages import ARTIFACTS, PROJECTOR, go_to, new_page
from ui.links import slug
from ui.pages import path_of
from ui.start.plans import PLANS
from ui.tabs import specs

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 800, "height": 720}
SHOTS = ARTIFACTS / "pages"

# every box of the navigation's links and its menu button, and how far the page runs past the window's right edge
NAV_BOXES = """() => ({
  boxes: [...document.querySelectorAll('#lab-nav summary, #lab-nav nav a')].filter(e => e.checkVisibility())
    .map(e => { const b = e.getBoundingClientRect();
                return {text: e.textContent.trim(), left: b.left, right: b.right, top: b.top, bottom: b.bottom,
                        height: b.height}; }),
  width: innerWidth, height: innerHeight, overflow: document.documentElement.scrollWidth - innerWidth,
})"""


def nav_drawn(page, phone: bool = False) -> None:
    """Until the navigation is drawn: its links on a wide screen, its Lessons button on a phone."""
    expect(page.locator("#lab-nav summary" if phone else "#lab-nav nav a").first).to_be_visible()


def out_of_view(where: dict) -> list[str]:
    return [
        f"{b['text']!r} at {b['left']:.0f}-{b['right']:.0f} x {b['top']:.0f}-{b['bottom']:.0f}"
        for b in where["boxes"]
        if b["left"] < 0 or b["top"] < 0 or b["right"] > where["width"] + 0.5 or b["bottom"] > where["height"] + 0.5
    ]


def landed_on(page, spec) -> None:
    """The page is the lesson's own: its path, its link marked current, its main control drawn."""
    assert urlparse(page.url).path == f"/{path_of(spec)}", (spec.id, page.url)
    expect(page.locator("#lab-nav a[aria-current=page]")).to_have_text(spec.title)
    expect(page.get_by_role("link", name="Home", exact=True)).to_be_hidden()  # gradio's own navbar, not drawn
    page.locator(spec.main).first.wait_for()


def shoot(page, spec, mode: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{spec.order:02d}-{spec.id}-{mode}.png"))


def test_every_lesson_is_one_click_away_on_a_projector_and_the_whole_navigation_is_in_view(browser, app_url):
    page = new_page(browser, PROJECTOR)
    try:
        for mode, projector in (("1280x720", "0"), ("1280x720-projector", "1")):
            page.goto(f"{app_url}?projector={projector}")
            for spec in specs():
                nav_drawn(page)
                where = page.evaluate(NAV_BOXES)
                assert len([b for b in where["boxes"] if b["text"] != "Lessons"]) == len(specs()), where
                assert not out_of_view(where) and where["overflow"] <= 0, (mode, out_of_view(where), where["overflow"])
                assert not page.locator("#lab-nav summary").is_visible()  # no menu to open: one click
                if spec.id != "start":
                    go_to(page, spec.title)
                landed_on(page, spec)
                # the mode a link asked for on the first page holds on every page the navigation opens
                assert page.evaluate("() => document.documentElement.classList.contains('projector')") == (
                    projector == "1"
                )
                expect(page.locator("#projector input")).to_be_checked(checked=projector == "1")
                shoot(page, spec, mode)
    finally:
        page.close()


def test_every_lesson_is_two_taps_away_on_a_phone_and_the_navigation_takes_one_row(browser, app_url):
    page = new_page(browser, PHONE)
    try:
        page.goto(f"{app_url}?projector=0")
        for spec in specs():
            nav_drawn(page, phone=True)
            where = page.evaluate(NAV_BOXES)
            (menu,) = where["boxes"]  # closed: the Lessons button alone, one row
            assert menu["text"].startswith("Lessons") and 44 <= menu["height"] <= 60, menu
            assert where["overflow"] <= 0 and not out_of_view(where), where
            page.locator("#lab-nav summary").click()  # tap 1
            opened = page.evaluate(NAV_BOXES)
            assert len(opened["boxes"]) == len(specs()) + 1 and not out_of_view(opened), out_of_view(opened)
            assert all(b["height"] >= 44 for b in opened["boxes"]), opened["boxes"]
            if spec.id == "start":
                page.locator("#lab-nav summary").click()  # closes it again
                expect(page.locator("#lab-nav nav a").first).to_be_hidden()
            else:
                with page.expect_navigation():
                    page.locator("#lab-nav").get_by_role("link", name=spec.title, exact=True).click()  # tap 2
            landed_on(page, spec)
            shoot(page, spec, "390x844")
    finally:
        page.close()


def test_each_lesson_at_800_px(browser, app_url):
    page = new_page(browser, LAPTOP)
    try:
        for spec in specs():
            page.goto(f"{app_url}{path_of(spec)}?projector=0")
            landed_on(page, spec)
            nav_drawn(page)
            where = page.evaluate(NAV_BOXES)
            assert not out_of_view(where) and where["overflow"] <= 0, out_of_view(where)
            shoot(page, spec, "800x720")
    finally:
        page.close()


def test_every_link_sent_before_lands_on_its_lesson_with_its_preset_and_its_notice(browser, app_url):
    """A lesson's link id and every id it was shared under before, each with its last preset; and each class plan's
    first step, whose link asks for a notice."""
    page = new_page(browser)
    try:
        for spec in specs():
            for link_id in (spec.id, *spec.old_ids):
                if spec.id == "start":
                    page.goto(f"{app_url}?tab=start")
                    landed_on(page, spec)
                    continue
                query = f"?tab={link_id}" + (f"&preset={slug(spec.presets[-1])}" if spec.presets else "")
                page.goto(f"{app_url}{query}&notice=nothing-here")
                landed_on(page, spec)
                asked = parse_qs(urlparse(page.url).query)
                assert asked["tab"] == [spec.id] and asked["notice"] == ["nothing-here"], page.url
                if spec.presets:
                    expect(page.locator(f"#{spec.id}-preset input")).to_have_value(spec.presets[-1])
        for plan in PLANS:
            step = plan.steps[0]
            page.goto(f"{app_url}{step.link}")
            spec = next(s for s in specs() if s.id == step.tab)
            landed_on(page, spec)
            # the notice the page's script brings on screen once the step's action makes it true: the plans' own
            # test (test_start_plans_e2e.py) follows every step through these links to it
            assert parse_qs(urlparse(page.url).query)["notice"] == [step.shows.removeprefix("#")]
            if step.preset:
                preset = next(name for name in spec.presets if slug(name) == step.preset)
                expect(page.locator(f"#{spec.id}-preset input")).to_have_value(preset)
    finally:
        page.close()


CONFIG_KB = 100  # the Step page's config at most (issue 56: a phone on a school network reads it before anything)


def test_the_step_lessons_page_config_is_at_most_100_kb(browser, app_url):
    """The config a class's link to the Step lesson makes the browser read (gradio's, as the page holds it, measured as
    bench/page_open.py measures it) is at most CONFIG_KB: the page's own components and events; the app's style sheet,
    the lesson's own style and scripts and the patched elements' script are in the app's cached head file instead."""
    page = new_page(browser, PHONE)
    page.goto(f"{app_url}?tab=step&projector=0")
    page.locator("#step-prefill").wait_for()
    size_kb = page.evaluate("() => JSON.stringify(window.gradio_config).length") / 1024
    page.close()
    assert size_kb <= CONFIG_KB, f"the Step page's config is {size_kb:.1f} KB"
