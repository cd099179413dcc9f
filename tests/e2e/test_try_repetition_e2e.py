"""The repetition panel's "Try this" steps (Beam search & repetition tab), done through the page's controls in
headless Chromium on the bundled model (float32, CPU), first seed 0 as the panel starts; each asserts what its text
says is drawn: the cards' numbers and loop markers, the chart's bars and whiskers."""

import re

import pytest

from tests.helpers.contrast import contrast_problems
from tests.helpers.pages import figure, idle, pick, set_number, until
from ui.beams.repetition import PRESETS
from ui.beams.tab import SPEC

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
RUN_S = 600  # six settings x 100 tokens on a shared 2-core CPU


TAB = (SPEC.title, "#repetition-run")  # the module's page (tests/e2e/conftest.py)


def labels(page) -> list[str]:
    return page.locator("#repetition-texts .repetition-card .repetition-head b").all_inner_texts()


def run(page, settings: list[str]) -> dict[str, dict]:
    """Press Run; once the cards of these `settings` are drawn and the run has ended, each card's numbers:
    {label: {rep4, loop, words}}."""
    page.click("#repetition-run")
    until(page, lambda: labels(page) == settings, RUN_S, f"the cards of {settings}")
    idle(page, RUN_S)  # the numbers are read once the run has ended
    cards = {}
    for card in page.locator("#repetition-texts .repetition-card").all():
        label = card.locator(".repetition-head b").inner_text()
        nums = card.locator(".repetition-nums").inner_text()
        cards[label] = {
            "rep4": int(re.search(r"4-grams repeated (\d+)%", nums)[1]),
            "loop": card.locator(".repetition-loop").count() > 0,
            "words": {w: int(n) for w, n in re.findall(r"“([^”]+)” ×(\d+)", nums)},
        }
    return cards


def tick_only(page, labels: list[str]) -> None:
    boxes = page.locator("#repetition-settings label")
    for k in range(boxes.count()):
        box = boxes.nth(k)
        box.locator("input").set_checked(box.inner_text().strip() in labels)


def test_the_repetition_try_this_steps_do_what_they_say(page):
    # 1. Run with the defaults: six settings on "Write a song about friendship."
    cards = run(page, ["greedy", "temperature 1.0", "top-p 0.9", "repetition 1.3", "presence 1.0", "repetition 2.0"])
    # 2. greedy repeats more than temperature 1.0 and top-p 0.9, and its text carries the loop marker
    greedy = cards["greedy"]
    assert greedy["rep4"] > cards["temperature 1.0"]["rep4"] and greedy["rep4"] > cards["top-p 0.9"]["rep4"]
    assert greedy["loop"]
    # 3. the penalties: repetition 1.3 and presence 1.0 both stop greedy's loop
    for penalty in ("repetition 1.3", "presence 1.0"):
        assert not cards[penalty]["loop"] and cards[penalty]["rep4"] < greedy["rep4"]
    # 4. Mia and Max: every card counts both names; repetition 2.0 writes them less often than greedy
    # (greedy names Max twice in 80 tokens and repetition 2.0 never: 80 tokens per run instead of 100 keep the suite
    # quick)
    pick(page, "repetition-preset", "a story about Mia and Max")
    until(
        page, lambda: page.locator("#repetition-words textarea").input_value() == "Mia, Max", 30, "the preset's words"
    )
    set_number(page, "repetition-tokens", 80)
    tick_only(page, ["greedy", "repetition 2.0"])
    cards = run(page, ["greedy", "repetition 2.0"])
    assert all(set(c["words"]) == {"Mia", "Max"} for c in cards.values())
    assert sum(cards["repetition 2.0"]["words"].values()) < sum(cards["greedy"]["words"].values())
    # 5. three seeds: the sampled bars are the mean of three runs, with whiskers from the lowest to the highest
    # (true at any length: 30 tokens per run instead of 100 keep the suite quick)
    set_number(page, "repetition-tokens", 30)
    tick_only(page, ["temperature 1.0", "top-p 0.9"])
    set_number(page, "repetition-seeds", 3)
    run(page, ["temperature 1.0", "top-p 0.9"])
    bars = figure(page, "repetition-chart")["data"]
    assert all(t["error_y"]["visible"] for t in bars)
    assert all(c == [3] for t in bars for c in t["customdata"])
    assert "(mean of 3 seeds)" in page.locator("#repetition-findings").inner_text()


@pytest.mark.parametrize("preset", list(PRESETS))
def test_each_repetition_preset_fills_its_prompt_and_the_words_to_count(page, preset):
    # the song (the default) and Mia and Max carry claims, checked by the steps above; each preset's name is its prompt
    pick(page, "repetition-preset", preset)
    message, words = PRESETS[preset]
    until(page, lambda: page.get_by_label("Prompt (open-ended prompts loop more)").input_value() == message, 30, preset)
    assert page.locator("#repetition-words textarea").input_value() == words


def test_the_repetition_panel_text_and_charts_meet_wcag_aa_contrast(page):
    assert contrast_problems(page) == []
