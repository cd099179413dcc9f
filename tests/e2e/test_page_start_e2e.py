"""The page's first script (ui/kit/page_start.py): gradio's status trackers ask for a frame as often as their counter
changes, and the loading tracker's loop, which gradio 6 leaves running, ends once the app is on the page.

The script is tried on a blank page with loops written for the test (a loop "of a tracker" is code whose file name
has `statustracker` in it, as the browser's stack names gradio's module), and on the app as a student opens it."""

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.helpers.pages import idle, new_page
from ui.kit.page_start import TRACKER_FRAMES, TRACKER_TICK_MS

pytestmark = [pytest.mark.browser]

# a loop that asks for a frame from each frame's callback, as gradio's tracker does, counting its frames; the file
# name the browser gives the code is what the script reads from the stack
LOOP = """([name, file]) => {
  window.frames_of = window.frames_of || {};
  window.frames_of[name] = 0;
  (0, eval)(`(() => {
    const tick = () => { window.frames_of['${name}'] += 1; requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  })();
  //# sourceURL=${file}`);
}"""
SCRIPT = TRACKER_FRAMES.removeprefix("<script>").removesuffix("</script>")


def counted(page, name: str, seconds: float) -> int:
    """The frames `name`'s loop ran in the next `seconds`."""
    before = page.evaluate(f"window.frames_of['{name}']")
    page.wait_for_timeout(seconds * 1000)
    return page.evaluate(f"window.frames_of['{name}']") - before


def test_a_trackers_loop_gets_a_frame_a_tick_and_any_other_loop_every_frame(browser):
    page = new_page(browser)
    page.set_content("<div class='contain'></div>")  # the app is on the page
    page.evaluate(SCRIPT)
    page.evaluate(LOOP, ["tracker", "assets/statustracker-test.js"])
    page.evaluate(LOOP, ["other", "assets/plot-test.js"])
    before = page.evaluate("({...window.frames_of})")
    page.wait_for_timeout(2000)
    after = page.evaluate("({...window.frames_of})")
    page.close()
    tracker, other = (after[name] - before[name] for name in ("tracker", "other"))
    ticks = 2000 / TRACKER_TICK_MS
    assert 3 <= tracker <= ticks + 2  # ~20 frames in 2 s, where it asked for ~120 (fewer on a busy machine)
    assert other >= 2 * tracker  # the other loop is left alone: a frame each time the page draws one


def test_the_loaders_loop_ends_once_the_app_is_on_the_page(browser):
    page = new_page(browser)
    page.set_content("<div id='root'></div>")  # the app not there yet: the loading tracker's loop starts
    page.evaluate(SCRIPT)
    page.evaluate(LOOP, ["loader", "assets/statustracker-test.js"])
    assert counted(page, "loader", 0.3) > 0  # while the app loads, the loop runs at the page's frame rate
    page.evaluate("document.querySelector('#root').className = 'contain'")
    page.wait_for_function("window.labLoaderLoopsEnded === 1")
    assert counted(page, "loader", 1.0) == 0
    page.close()


def test_the_app_page_asks_for_no_frames_while_nothing_happens(browser, app_url):
    page = browser.new_page(viewport={"width": 1280, "height": 720})  # its own tab: the counter stays with it
    page.add_init_script("""
      const ask = window.requestAnimationFrame.bind(window);
      window.asked = 0;
      window.lastAsked = performance.now();
      window.requestAnimationFrame = callback => {
        window.asked += 1;
        window.lastAsked = performance.now();
        return ask(callback);
      };
    """)
    page.goto(app_url)
    page.locator("#lab-nav").wait_for()
    idle(page)
    # the page's own frames as it settles end (gradio waits up to 60 frames for an iframe resizer), then it asks for
    # none: with the loader's loop left running it asked for 60 a second, forever
    try:
        page.wait_for_function("performance.now() - window.lastAsked > 1000", polling=100, timeout=30_000)
    except PlaywrightTimeout:
        raise AssertionError(f"the page kept asking for frames: {page.evaluate('window.asked')} so far") from None
    # gradio's loading tracker was there, and its loop has ended (should gradio end it itself one day, this says so)
    assert page.evaluate("window.labLoaderLoopsEnded") >= 1
    before = page.evaluate("window.asked")
    page.wait_for_timeout(2000)
    asked = page.evaluate("window.asked") - before
    page.close()
    assert asked <= 2
