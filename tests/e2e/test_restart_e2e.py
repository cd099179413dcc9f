"""A server that stops answering, then restarts, as its pages see it (ui/alive.py), on an app of this module's own: a
class round open on a teacher's page (the projector, 1280x720 in projector mode) and a student's phone (390x844), and
a Step page with a run.

The server is first frozen (SIGSTOP: it holds its connections and answers nothing), then killed (SIGKILL: nothing
runs after it, as in a crash). Within 5 s each page says in words that the server is not answering; thawed, each says
it answers again; started again on the same port, each says that it restarted and what that lost. The projector drops
the dead round's code and link, and the Step page's first click says the server restarted, not another reason.
Screenshots of the banner, each state at 1280x720 and 390x844, go to artifacts/."""

import os
import signal
import time

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import ARTIFACTS, PROJECTOR, idle, until
from ui import alive
from ui.launch import CHROMIUM, free_port, start_app

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
PHONE = {"width": 390, "height": 844}
NOTICED_S = 5  # the longest a page may take to say the server is not answering
LOST = "the server restarted after this page was opened"


@pytest.fixture(scope="module")
def served():
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (make browser)")
    port = free_port()
    app = {"proc": start_app(port, OMP_NUM_THREADS="1"), "port": port}
    yield app
    proc = app["proc"]
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGCONT)
        proc.terminate()
        proc.wait(timeout=20)


def banner(page) -> tuple[str | None, str]:
    """The banner's state (down, back, restarted; None while hidden) and its words."""
    return page.evaluate(
        "() => { const b = document.getElementById('lab-alive');"
        " return b && !b.hidden ? [b.dataset.state, b.querySelector('span').textContent] : [null, '']; }"
    )


def said_within(pages: dict, state: str, words: str, since: float, timeout_s: float) -> dict[str, float]:
    """Wait until every page's banner is in `state`, saying `words`; the seconds each took after `since`."""
    took = {}
    deadline = since + timeout_s
    while len(took) < len(pages):
        for name, page in pages.items():
            if name not in took and banner(page) == [state, words]:
                took[name] = time.monotonic() - since
        if time.monotonic() > deadline:
            missing = {name: banner(page) for name, page in pages.items() if name not in took}
            raise AssertionError(f"after {timeout_s} s these pages did not say {state!r}: {missing}")
        next(iter(pages.values())).wait_for_timeout(50)
    return took


def shot(pages: dict, name: str) -> None:
    for who, page in pages.items():
        page.screenshot(path=ARTIFACTS / f"alive_{name}_{who}.png")


def test_every_page_says_the_server_stopped_answering_came_back_and_restarted(served, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    url = f"http://127.0.0.1:{served['port']}/"
    teacher = browser.new_page(viewport=PROJECTOR)
    teacher.goto(f"{url}?tab=classround&preset=capital-of-france&kind=guess&projector=1")
    expect(teacher.locator("#classround-prompt textarea")).to_have_value("The capital of France is", timeout=180_000)
    idle(teacher)
    teacher.click("#classround-start")
    code = until(teacher, lambda: teacher.locator("#classround-view .classround-code").inner_text(), 180, "a code")
    phone = browser.new_page(viewport=PHONE)
    phone.goto(f"{url}?tab=classround&round={code}")
    expect(phone.locator("#classround-view")).to_contain_text(f"Round {code}", timeout=180_000)
    step = browser.new_page(viewport=PROJECTOR)
    step.goto(f"{url}?tab=step")
    step.locator("#step-prefill").wait_for(timeout=180_000)
    step.click("#step-prefill")
    step.wait_for_selector("#step-dist .lc-bar", timeout=120_000)
    pages = {"projector": teacher, "phone": phone, "step": step}
    for page in pages.values():
        idle(page)
        assert banner(page) == [None, ""]  # nothing said while the server answers

    # frozen: it answers nothing, and each page's ask runs out of time
    os.kill(served["proc"].pid, signal.SIGSTOP)
    frozen = time.monotonic()
    took = said_within(pages, "down", alive.DOWN, frozen, 30)
    print("frozen; each page said so after", {k: f"{v:.1f} s" for k, v in took.items()})
    assert max(took.values()) < NOTICED_S, took
    shot({"projector": teacher, "phone": phone}, "down")
    os.kill(served["proc"].pid, signal.SIGCONT)
    said_within(pages, "back", alive.BACK, time.monotonic(), 30)

    # killed, as in a crash: no page has an event in flight
    served["proc"].kill()
    served["proc"].wait(timeout=20)
    killed = time.monotonic()
    took = said_within(pages, "down", alive.DOWN, killed, 30)
    print("killed; each page said so after", {k: f"{v:.1f} s" for k, v in took.items()})
    assert max(took.values()) < NOTICED_S, took
    expect(teacher.locator("#classround-view .classround-code")).to_have_text(code)  # the round, until it is known

    served["proc"] = start_app(served["port"], OMP_NUM_THREADS="1")  # the same address, another start
    said_within(pages, "restarted", alive.RESTARTED, time.monotonic(), 60)
    shot({"projector": teacher, "phone": phone}, "restarted")
    # the round's pages drop its code and link, and say why
    for who in (teacher, phone):
        expect(who.locator("#classround-view")).to_contain_text(LOST, timeout=60_000)
        expect(who.locator("#classround-view .classround-code")).to_have_count(0)
        expect(who.locator("#classround-view a.classround-link")).to_have_count(0)
    # the Step page's first click: the restart, not an idle run's expiry
    step.click("#step-step")
    expect(step.locator("#step-message")).to_contain_text(LOST, timeout=60_000)
    expect(step.locator("#step-message")).not_to_contain_text("expired")
    step.click("#step-prefill")  # what the message says to press: a new run, on the new server
    expect(step.locator("#step-message .lab-error")).to_have_count(0, timeout=120_000)
    idle(step)
    step.click("#step-step")
    idle(step)
    expect(step.locator("#step-message .lab-error")).to_have_count(0)
    teacher.locator("#lab-alive button").click()  # dismissed: the restart's note goes
    expect(teacher.locator("#lab-alive")).to_be_hidden()
    for page in pages.values():
        page.close()
