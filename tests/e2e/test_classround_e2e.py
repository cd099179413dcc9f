"""A class round in headless Chromium on the bundled model: a teacher's page (the projector, 1280x720 in projector
mode) and two students' pages (a laptop, and a phone at 390x844) run a guess round and a sampling round end to end
through the pages' own controls, then greedy together. Students see the prompt and the step, read-only, and no control
of the teacher's; a student's page that presses the teacher's hidden buttons is told it may not, and the round is
unchanged; the projector counts the students as they join and leave, and its histogram counts exactly the draws the
students were shown. Screenshots of the projector and the phone go to artifacts/."""

import re
from collections import Counter

import pytest
from playwright.sync_api import expect

from tests.helpers.classround import LAPTOP, chart, drawn_tokens, press_hidden, shows, told, view
from tests.helpers.pages import ARTIFACTS, PROJECTOR, idle, new_page, set_number, until

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
PHONE = {"width": 390, "height": 844}
TEACHER_ONLY = ("#classround-start", "#classround-next-model", "#classround-end", "#classround-temperature")


def test_a_teacher_and_two_students_run_a_guess_round_and_a_sampling_round_end_to_end(browser, app_url):
    ARTIFACTS.mkdir(exist_ok=True)
    teacher = new_page(browser, PROJECTOR)
    teacher.goto(f"{app_url}?tab=classround&preset=capital-of-france&kind=guess&projector=1")
    expect(teacher.locator("#classround-prompt textarea")).to_have_value("The capital of France is", timeout=180_000)
    idle(teacher)
    teacher.click("#classround-start")
    code = shows(teacher, r"Round [A-Z0-9]{4}", "the round's code on the projector", 180)
    code = re.search(r"Round ([A-Z0-9]{4})", code).group(1)
    link = teacher.locator("#classround-view a.classround-link")
    expect(link).to_have_text(f"{app_url}?tab=classround&round={code}")  # written out whole, to read out

    laptop = new_page(browser, LAPTOP)
    laptop.goto(link.get_attribute("href") and f"{app_url}?tab=classround&round={code}")
    phone = new_page(browser, PHONE)
    phone.goto(f"{app_url}?tab=classround&round={code}")
    for student in (laptop, phone):
        expect(student.locator("#classround-view .classround-prompt")).to_have_text("The capital of France is")
        expect(student.locator("#classround-view")).to_contain_text(f"Round {code}")
        for control in TEACHER_ONLY:
            expect(student.locator(control)).to_be_hidden()
        expect(student.locator("#classround-guess")).to_be_visible()
    shows(teacher, r"2 students here", "the projector to count both students")

    # guess, then reveal: the laptop picks one of the ten, the phone types its own
    laptop.locator("#classround-view .classround-choice", has_text="␣Paris").click()
    expect(laptop.locator("#classround-view")).to_contain_text("Your guess: ␣Paris")
    phone.locator("#classround-guess :is(textarea, input)").fill("London")
    phone.locator("#classround-guess :is(textarea, input)").press("Enter")
    expect(phone.locator("#classround-view")).to_contain_text("Your guess: ␣London")
    phone.screenshot(path=str(ARTIFACTS / "e2e-classround-phone-guess.png"))  # the ten choices above the box
    shows(teacher, r"2 guesses from 2 students here", "the projector to count two guesses, hidden")
    assert "London" not in view(teacher)  # hidden until the reveal

    # the phone presses the teacher's controls (hidden from it): told it may not, and nothing changes
    for selector, words in (
        ("#classround-reveal", "reveal the guesses of"),
        ("#classround-next-model", "advance"),
        ("#classround-end", "end"),
    ):
        press_hidden(phone, selector)
        told(phone, f"only the teacher who started round {code} can {words} it")
        idle(phone)
    phone.evaluate("() => [...document.querySelectorAll('#classround-kind input')].at(-1).click()")
    told(phone, f"only the teacher who started round {code} can change it")
    shows(teacher, r"Guess, then reveal · Round", "the round still a guess round")
    assert "has ended" not in view(teacher) and teacher.locator("#classround-view .classround-tok").count() == 0

    teacher.click("#classround-reveal")
    shows(
        teacher, r"1 of 2 guessed the top-1, ␣Paris \(77% of the model", "the reveal beside the model's probabilities"
    )
    guessed = chart(teacher).series("the class's guesses")
    shares = dict(zip(guessed.x, guessed.y))
    assert shares["␣Paris"] == 0.5 and shares["␣London"] == 0.5
    teacher.screenshot(path=str(ARTIFACTS / "e2e-classround-projector-guess.png"))
    teacher.click("#classround-next-class")  # a tie: the more probable token, ␣Paris
    shows(teacher, r"is␣Paris\?", "␣Paris appended")

    # sample together on the same round: the students' pages follow the teacher's change of kind
    teacher.locator("#classround-kind").get_by_label("Sample together", exact=True).check()
    first = int(re.search(r"Draw (\d+): no draws yet", shows(teacher, r"Draw \d+: no draws yet", "an empty draw"))[1])
    for student in (laptop, phone):
        expect(student.locator("#classround-draw")).to_be_visible(timeout=30_000)  # their page asks every 3 s
    for k in range(1, 4):
        for student in (laptop, phone):
            student.click("#classround-draw")
            until(student, lambda s=student, k=k: len(drawn_tokens(s)) == k, 60, f"draw {k} on a student's page")
    shows(teacher, rf"Draw {first}: 6 draws", "all six draws on the projector")
    bars = chart(teacher).series("the class's draws")
    shown = {x: int(y) for x, y in zip(bars.x, bars.y) if y}
    students = Counter(drawn_tokens(laptop) + drawn_tokens(phone))
    others = sum(n for t, n in students.items() if t not in bars.x)
    assert {t: n for t, n in students.items() if t in shown} | ({} if not others else {"others": others}) == {
        (x if not x.endswith("others") else "others"): n for x, n in shown.items()
    }  # each draw counted once: the projector's bars are exactly what the students were shown

    set_number(teacher, "classround-temperature", 1.5)
    shows(teacher, rf"Draw {first + 1}: no draws yet, at temperature 1\.5", "a new draw at the new temperature")
    assert "The draw before: 6 draws at temperature 1" in view(teacher)
    teacher.click("#classround-draw-each")
    shows(
        teacher, rf"Draw {first + 1}: 300 draws at temperature 1\.5", "100 draws each: two students and the projector"
    )
    assert re.search(r"Chi-square test: p = [\d.<> ]+, the draws", view(teacher))
    teacher.screenshot(path=str(ARTIFACTS / "e2e-classround-projector.png"))
    # each student's page shows the 100 drawn for it, without a click of its own
    expect(laptop.locator("#classround-view")).to_contain_text("the last 40 of 100", timeout=30_000)
    laptop.screenshot(path=str(ARTIFACTS / "e2e-classround-laptop.png"))
    phone.click("#classround-draw")
    until(phone, lambda: len(drawn_tokens(phone)) == 41 or "the last 40 of 101" in view(phone), 60, "the phone's draw")
    phone.screenshot(path=str(ARTIFACTS / "e2e-classround-phone.png"), full_page=True)

    # greedy together: each student runs their own greedy text through the shared scheduler
    teacher.locator("#classround-kind").get_by_label("Greedy together", exact=True).check()
    for student in (laptop, phone):
        expect(student.locator("#classround-run-greedy")).to_be_visible(timeout=30_000)
        student.click("#classround-run-greedy")
    for student in (laptop, phone):
        expect(student.locator("#classround-view")).to_contain_text("Your greedy run: 16 of 16 tokens", timeout=300_000)
        expect(student.locator("#classround-run-greedy")).to_be_hidden()  # nothing left to run
    said = shows(teacher, r"Every token agreed|not every token agreed", "the class's greedy verdict")
    assert "float noise" in said
    teacher.screenshot(path=str(ARTIFACTS / "e2e-classround-projector-greedy.png"))

    # a student who leaves is counted out; the teacher's page, reloaded, is still the round's projector
    laptop.close()
    shows(teacher, r"1 student here \(1 left\)", "the laptop counted out")
    teacher.goto(f"{app_url}?tab=classround&projector=1")
    shows(teacher, rf"Greedy together · Round {code}", "the reloaded projector on its round", 120)
    teacher.click("#classround-end")
    expect(phone.locator("#classround-view")).to_contain_text(f"Round {code} has ended", timeout=30_000)
    phone.close()
    teacher.close()
