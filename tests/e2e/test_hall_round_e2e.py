"""A class round across a lecture hall's replicas, in headless Chromium: the teacher's page pinned to replica 1 and two
students' pages pinned to replica 2 (each browser's `lab_replica` cookie) run a sampling round end to end, the round
living in the hall's Redis; the projector's counts equal the draws the students were shown. Then replica 2 is
killed during the round: the proxy sends the students to replica 1, whose answer to their next press seats them again
and says the round goes on; one press again, and their draws, old and new, are counted on the projector."""

import re
from collections import Counter

import pytest
from playwright.sync_api import expect

from deploy.hall import COOKIE
from tests.helpers.classround import LAPTOP, chart, drawn_tokens, shows, told, view
from tests.helpers.pages import ACTION_MS, ARTIFACTS, PROJECTOR, idle, until

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


def pinned(browser, url: str, replica: str, viewport: dict):
    """A page in a browser of its own (its own cookie jar) whose requests the proxy sends to `replica` ("r1")."""
    context = browser.new_context(viewport=viewport)
    context.add_cookies([{"name": COOKIE, "value": replica, "url": url}])
    page = context.new_page()
    page.set_default_timeout(ACTION_MS)
    return page


def counted_once(teacher, students) -> None:
    """The projector's bars are exactly the draws the students' pages were shown: each counted once."""
    bars = chart(teacher).series("the class's draws")
    shown = {x: int(y) for x, y in zip(bars.x, bars.y) if y}
    drawn = Counter(t for s in students for t in drawn_tokens(s))
    others = sum(n for t, n in drawn.items() if t not in bars.x)
    assert {t: n for t, n in drawn.items() if t in shown} | ({"others": others} if others else {}) == {
        (x if not x.endswith("others") else "others"): n for x, n in shown.items()
    }


def draw(student, k: int) -> None:
    student.click("#classround-draw")
    until(student, lambda: len(drawn_tokens(student)) == k, 60, f"draw {k} on a student's page")


def test_a_round_started_on_one_replica_is_drawn_from_another_and_goes_on_when_that_one_dies(browser, hall):  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    teacher = pinned(browser, hall.url, "r1", PROJECTOR)
    teacher.goto(f"{hall.url}?tab=classround&preset=capital-of-france&kind=sample&projector=1")
    expect(teacher.locator("#classround-prompt textarea")).to_have_value("The capital of France is", timeout=180_000)
    idle(teacher)
    teacher.click("#classround-start")
    code = re.search(r"Round ([A-Z0-9]{4})", shows(teacher, r"Round [A-Z0-9]{4}", "the round's code", 180))[1]
    first = int(re.search(r"Draw (\d+): no draws yet", shows(teacher, r"Draw \d+: no draws yet", "an empty draw"))[1])

    students = [pinned(browser, hall.url, "r2", LAPTOP) for _ in range(2)]
    for student in students:  # replica 2 never saw the round start: it reads it from Redis
        student.goto(f"{hall.url}?tab=classround&round={code}")
        expect(student.locator("#classround-view")).to_contain_text(f"Round {code}", timeout=180_000)
        expect(student.locator("#classround-draw")).to_be_visible()
    shows(teacher, r"2 students here", "the projector on replica 1 to count both students of replica 2")
    for k in range(1, 4):
        for student in students:
            draw(student, k)
    shows(teacher, rf"Draw {first}: 6 draws", "all six draws, made on replica 2, on replica 1's projector")
    counted_once(teacher, students)
    teacher.screenshot(path=str(ARTIFACTS / "e2e-hall-round-projector.png"))

    hall.kill(2)  # the students' replica dies during the round
    for student in students:
        student.click("#classround-draw")  # the proxy sends it to replica 1, which had no seat for this page
        told(student, "the round goes on (the servers share it) and your seat is back, with what you drew")
        assert len(drawn_tokens(student)) == 3  # the click was refused, said so, and drew nothing
        idle(student)
        draw(student, 4)  # one press again: drawn on replica 1, counted in the same round
    said = shows(teacher, rf"Draw {first}: 8 draws", "the round going on: 8 draws, 2 of them after replica 2 died")
    assert "2 students here" in said, view(teacher)
    counted_once(teacher, students)
    teacher.click("#classround-draw-each")  # the teacher's press still reaches every seat, from replica 1
    shows(teacher, rf"Draw {first}: 308 draws", "100 draws each: two students and the projector")
    for page in (*students, teacher):
        page.context.close()
