"""The Constrained decoding tab's "Try this" steps, done in order through the page's controls in headless Chromium
on the bundled model (float32, CPU); each asserts what its text says is drawn: the answer's chips, the status line,
the mask rows, the chart's traces and the measurement; then the tab's contrast, with all of them drawn. Seeds are
the tab's default (0)."""

import json
import re

import pytest

from tests.helpers.contrast import contrast_problems
from tests.helpers.pages import ARTIFACTS, choose_preset, explained, figure, idle, until
from tests.helpers.step import more_settings
from ui.constrained.handlers import ALL_FORCED
from ui.constrained.tab import SPEC, TRY_THIS

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
RUN_S = 300  # a run, or 2 x 20 samples, on a shared 2-core CPU


TAB = (SPEC.title, "#constrained-step")  # the module's page (tests/e2e/conftest.py)


def text(page, elem: str) -> str:
    return page.locator(f"#{elem}").inner_text()


def answer(page) -> str:
    """The answer's chips as text (a space is drawn as ␣), without the legend under them."""
    return "".join(page.locator("#constrained-answer .chips .tok").all_inner_texts()).replace("␣", " ")


def press(page, button: str, status: str, timeout_s: float = RUN_S) -> str:
    """Press a button and wait until the status line says `status`."""
    page.click(f"#{button}")
    until(page, lambda: status in text(page, "constrained-status"), timeout_s, f"the status to say {status}")
    idle(page, timeout_s)  # the answer, the mask rows and the chart come with the status, read once it has ended
    return text(page, "constrained-status")


def test_step_1_the_keys_are_forced_and_the_model_writes_only_a_name_and_an_age(page):
    assert '`{"name":` arrives at once, forced by the grammar' in TRY_THIS
    press(page, "constrained-step", "forced by the grammar")
    assert answer(page).startswith('{"name":')
    assert "0 sampled" in text(page, "constrained-status")  # the first Step writes only forced tokens: the keys' text
    assert figure(page, "constrained-chart")["annotations"] == [ALL_FORCED]  # and the chart says so, not "Press Step"
    assert page.locator("#constrained-answer .chips .tok[title*='forced by the grammar']").count() >= 2
    explained(page, "#constrained-status", "fast-forward")  # the word in the status, explained where it first appears
    press(page, "constrained-end", "stopped")
    assert explained(page, "#constrained-status", "stopped: eos") == "eos"
    assert set(json.loads(answer(page).split("<|im_end|>")[0])) == {"name", "age"}
    page.screenshot(path=str(ARTIFACTS / "try-constrained-run.png"), full_page=True)


def test_step_2_the_capitalised_favourites_are_removed_by_the_grammar(page):
    choose_preset(page, "constrained-preset", "answer yes or no", "constrained-status")
    press(page, "constrained-step", "1 sampled")
    rows = text(page, "constrained-rows")
    grammar_row = next(line for line in rows.splitlines() if "legal" in line and "grammar" in line)
    assert "No" in grammar_row and "Yes" in grammar_row and "illegal mass" in grammar_row
    explained(page, "#constrained-rows", "illegal mass")
    names = {t["name"] for t in figure(page, "constrained-chart")["data"]}
    assert any(name.startswith("removed by grammar") for name in names)  # the wine bars


def test_step_3_llama_cpp_resamples_an_illegal_pick_and_transformers_never_draws_one(page):
    choose_preset(page, "constrained-preset", "a date as YYYY-MM-DD", "constrained-status")
    more_settings(page, "constrained")
    box = page.locator("#constrained-topk input")
    box.fill("1")
    box.press("Tab")
    page.locator("#constrained-order").get_by_text("llama.cpp", exact=True).click()
    press(page, "constrained-step", "1 sampled")
    assert "↺" in answer(page)
    assert "chain first drew Ap, illegal" in text(page, "constrained-rows")
    # the engine table looks one token ahead, and says so: past the sampled token and the ones forced after it
    made = int(re.match(r"(\d+) tokens?", text(page, "constrained-status")).group(1))
    assert f"for the next token, position {made + 1} of the answer" in text(page, "constrained-orders")
    press(page, "constrained-back", "0 sampled")
    box.fill("0")
    box.press("Tab")  # the table follows the knob at once, for the position Back returned to
    until(page, lambda: "top-k 0" in text(page, "constrained-orders"), 60, "the engine table to read top-k 0")
    orders = text(page, "constrained-orders")
    assert "position 1 of the answer" in orders and "nothing legal" not in orders
    box.fill("1")
    box.press("Tab")
    until(page, lambda: "top-k 1" in text(page, "constrained-orders"), 60, "the engine table to read top-k 1")
    page.locator("#constrained-order").get_by_text("transformers", exact=True).click()
    press(page, "constrained-step", "1 sampled")
    assert "↺" not in answer(page) and "first drew" not in text(page, "constrained-rows")
    assert answer(page)[:1].isdigit()


def test_step_4_an_illegal_force_names_the_legal_tokens_and_back_rolls_the_grammar_back(page):
    page.locator("#constrained-token input, #constrained-token textarea").first.fill("x")
    page.click("#constrained-force")
    until(page, lambda: "is not legal here" in page.locator("body").inner_text(), 120, "the refusal")
    assert "the grammar allows" in page.locator("body").inner_text().split("is not legal here", 1)[1][:400]
    press(page, "constrained-back", "0 sampled")
    assert answer(page) == ""
    press(page, "constrained-step", "1 sampled")  # the grammar is back at the start: a digit again
    assert answer(page)[:1].isdigit()


def test_a_token_typed_with_force_is_counted_as_yours_not_as_sampled(page):
    choose_preset(page, "constrained-preset", "answer yes or no", "constrained-status")
    page.locator("#constrained-token input, #constrained-token textarea").first.fill("yes")
    status = press(page, "constrained-force", "typed by you")
    assert "0 sampled" in status and "1 typed by you (Force)" in status and "1 sampled" not in status
    eos = page.locator("#constrained-status button.lab-term[title*='end-of-sequence']")
    assert "end-of-sequence" in eos.get_attribute("title")
    choose_preset(page, "constrained-preset", "a date as YYYY-MM-DD", "constrained-status")


def test_step_5_twenty_samples_without_the_constraint_rarely_parse_and_with_it_always_do(page):
    assert "Set **top-k** back to 0, press **Sample 20 times**" in TRY_THIS
    more_settings(page, "constrained")
    box = page.locator("#constrained-topk input")
    box.fill("0")
    box.press("Tab")
    page.click("#constrained-measure")
    found = until(
        page,
        lambda: re.search(r"parse and validate\s+(\d+) of 20\s+(\d+) of 20", text(page, "constrained-measure-md")),
        RUN_S,
        "the measurement",
    )
    free, held = int(found.group(1)), int(found.group(2))
    assert held == 20 and free < 10
    dots = {t["name"]: len(set(t["x"])) for t in figure(page, "constrained-measure-plot")["data"]}
    assert max(dots.values()) > 1  # sampled answers, not one greedy answer twenty times
    page.screenshot(path=str(ARTIFACTS / "try-constrained-measure.png"), full_page=True)


def test_cancel_stops_the_samples_within_one_and_says_how_far_they_got(page):
    page.click("#constrained-measure")
    seen = until(
        page,
        lambda: re.search(r"without the constraint: sample (\d+) of 20", page.locator("body").inner_text()),
        RUN_S,
        "the samples to start",
    )
    page.get_by_role("button", name="Cancel").click()
    found = until(
        page,
        lambda: re.search(r"Cancelled after (\d+) of 20 samples", text(page, "constrained-measure-md")),
        120,
        "the cancelled note",
    )
    assert int(found.group(1)) <= int(seen.group(1)) + 1  # the sample under way when Cancel came, at most
    idle(page)


@pytest.mark.parametrize(
    ("box", "value", "said"),
    [
        ("constrained-topk", "-4", "Top-k must be a whole number in [0, 200] (0 = off), got -4"),
        ("constrained-seed", "-4", "Seed must be a whole number in [0, 4294967295], got -4"),
        ("constrained-samples", "999", "Samples must be a whole number in [1, 50], got 999"),
    ],
)
def test_a_value_out_of_range_is_refused_in_the_apps_words_and_kept_as_typed(page, box, value, said):
    more_settings(page, "constrained")
    field = page.locator(f"#{box} input")
    before = field.input_value()
    field.fill(value)
    field.press("Tab")
    page.click("#constrained-measure" if box == "constrained-samples" else "#constrained-step")
    until(page, lambda: said in text(page, "constrained-message"), 120, f"the message {said!r}")
    idle(page)
    assert field.input_value() == value  # nothing changed it silently
    assert page.locator(".error").count() == 0  # no "Error" badge on an output: the message line says it
    field.fill(before)
    field.press("Tab")


def test_back_before_any_token_says_to_press_step(page):
    page.click("#constrained-reset")
    idle(page)
    page.click("#constrained-back")
    until(page, lambda: "press Step to start" in text(page, "constrained-message"), 60, "the Back message")


def test_the_constrained_tab_text_and_charts_meet_wcag_aa_contrast(page):
    assert contrast_problems(page) == []  # with a run and the measurement drawn
