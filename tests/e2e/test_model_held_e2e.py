"""While a timing measurement holds the shared model, another learner's lesson says so under its main button, in
words a projector's room and a phone can read without hovering (ui/server_note.py), and stops saying it once the
model is free again."""

import pytest

from tests.helpers.pages import idle, new_page, until
from ui.server_note import WAITS

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

# what the page draws under the button: its ::after text, as the browser computes it
UNDER = "s => getComputedStyle(document.querySelector(s), '::after').content"


def test_a_lesson_whose_model_is_held_says_so_under_its_main_button(browser, app_url):
    teacher = new_page(browser, {"width": 1280, "height": 720})
    teacher.goto(f"{app_url}?tab=timing&projector=0")
    teacher.get_by_role("button", name="Re-measure", exact=True).wait_for()
    student = new_page(browser, {"width": 390, "height": 844})
    student.goto(f"{app_url}?tab=step&projector=0")
    student.locator("#step-prefill").wait_for()
    idle(student)
    assert student.evaluate(UNDER, "#step-prefill") in ("none", "normal")
    # Re-measure: Measure shows the server's kept measurement when an earlier test made one, and holds nothing
    teacher.get_by_role("button", name="Re-measure", exact=True).click()
    try:
        until(student, lambda: WAITS in student.evaluate(UNDER, "#step-prefill"), 60, "the button's waiting line")
        assert "timing measurement" in student.locator("#step-prefill").get_attribute("title")
    finally:
        teacher.get_by_role("button", name="Cancel", exact=True).click()
    until(student, lambda: student.evaluate(UNDER, "#step-prefill") in ("none", "normal"), 120, "the line gone")
    teacher.close()
    student.close()
