"""The step tab's words, performed: every "Try this" step and every preset, done through the visible controls in
headless Chromium on the bundled model, with the effect it claims read from the chart's data and the page.
Also: one screen for the loop at 1280x720, errors in one place, keys, shared links. One app, one browser page.
Seeded claims use the preset's seed (0) unless the step names another."""

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import ARTIFACTS, current_lesson, figure, idle, new_page, pick, set_number, until
from tests.helpers.step import more_settings
from ui.step.lessons import PRESETS, SLUGS, WALKTHROUGH
from visuals.step.timeline import COPIED_NAME, PREFILL_NAME

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
LONG = 180_000  # ms: a whole run on a loaded 2-core machine
CONFIDENT, OPEN, GREEDY, HOT = PRESETS


@pytest.fixture
def page(step_page):
    return step_page


def chart(page, elem: str = "step-dist") -> list[dict]:
    """The chart's series, as plain data (tests/helpers/pages.py, FIGURE)."""
    return (figure(page, elem) or {"data": []})["data"]


def title(page) -> str:
    """The chart's title and the line under it (what was chosen)."""
    return page.locator("#step-dist .lc-title").text_content()


def filled_bars(page) -> dict[str, float]:
    """Token label -> bar height, for the bars that hold probability after the settings (not the outlines)."""
    return {x: y for t in chart(page) for x, y, look in zip(t["x"], t["y"], t["look"]) if look == "solid"}


def model_marks(page) -> list[float]:
    return next(t["y"] for t in chart(page) if t["name"] == "the model's own probability")


def chips(page) -> list[str]:
    return page.locator("#step-chips .tok.gen").all_inner_texts()


def wait_chips(page, n: int) -> None:
    page.wait_for_function(f"document.querySelectorAll('#step-chips .tok.gen').length === {n}", timeout=LONG)


def prefill(page) -> None:
    page.click("#step-prefill")
    page.wait_for_function(
        "() => { const t = document.querySelector('#step-dist .lc-head');"
        " return t && t.textContent.includes('not chosen yet')"
        " && document.querySelectorAll('#step-chips .tok.gen').length === 0; }",
        timeout=LONG,
    )


def step(page, times: int = 1) -> None:
    for _ in range(times):
        n = len(chips(page)) + 1
        page.click("#step-step")
        wait_chips(page, n)
        # the chart comes in the same answer: its title names the step once it is this one's
        page.wait_for_function(
            f"() => {{ const t = document.querySelector('#step-dist .lc-head');"
            f" return t && t.textContent.startsWith('step {n} '); }}",
            timeout=LONG,
        )


def run_to_end(page) -> None:
    page.click("#step-run-end")
    expect(page.locator("#step-stop")).to_contain_text("finished", timeout=LONG)
    idle(page)  # the chips and the chart come with the stop reason: read once the run's event has ended


def open_advanced(page) -> None:
    more_settings(page)


def pick_preset(page, name: str) -> None:
    pick(page, "step-preset", name)
    expect(page.locator("#step-prompt textarea")).to_have_value(PRESETS[name].prompt, timeout=LONG)


def test_the_first_screen_starts_the_lesson(page):
    assert page.locator("#step-preset input").input_value() == CONFIDENT
    expect(page.locator("#step-start")).to_contain_text("Press Prefill")
    assert page.locator("#step-prompt-chips .tok.prompt").count() == 5  # what the model reads, before any click
    # focus order: from the prompt, Tab reaches Prefill first
    page.click("#step-prompt textarea")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "step-prefill"


def test_try_this_1_confident_one_bar_holds_most_then_three_steps(page):
    assert "With the preset **Confident**, press **Prefill**" in WALKTHROUGH
    prefill(page)
    bars = filled_bars(page)
    top = max(bars, key=bars.get)
    assert top.strip() == "␣Paris" and bars[top] == pytest.approx(0.77, abs=0.01)  # "0.77"
    assert sum(bars.values()) < 1.0 + 1e-6 and sorted(bars.values())[-2] < 0.1  # one bar holds most of it
    step(page, 3)
    # the Confident preset's own words: seed 0, the third Step draws ␣To, a bar of p = 0.003
    assert "seed 0 the third Step draws ␣To" in PRESETS[CONFIDENT].watch
    assert chips(page)[2] == "␣To" and "p = 0.003" in title(page)
    page.screenshot(path=str(ARTIFACTS / "step-try-1.png"))


def test_try_this_2_back_and_temperature_2_flattens_the_same_logits(page):
    prefill(page)
    step(page, 3)
    page.click("#step-back")
    wait_chips(page, 2)
    page.wait_for_function(
        "document.querySelector('#step-dist .lc-head').textContent.includes('not chosen yet')", timeout=LONG
    )
    before, marks = max(filled_bars(page).values()), model_marks(page)
    assert before == pytest.approx(0.36, abs=0.01)
    set_number(page, "step-temperature", "2")
    until(page, lambda: max(filled_bars(page).values()) < 0.1, LONG / 1000, "temperature 2's flat bars")
    assert max(filled_bars(page).values()) == pytest.approx(0.02, abs=0.01)  # "drops from 0.36 to 0.02"
    assert model_marks(page) == marks  # the dashes stay: the same logits
    assert figure(page, "step-dist")["range"] == [0, 1.02]  # the axis did not rescale the change away
    page.screenshot(path=str(ARTIFACTS / "step-try-2-temperature-2.png"))
    step(page)


def test_try_this_3_forcing_a_short_bar_branches_the_run(page):
    prefill(page)
    step(page)
    options = "s => [...s.options].find(o => o.text.startsWith('#20 ')).value"
    twentieth = page.eval_on_selector("#step-candidate", options)
    page.select_option("#step-candidate", twentieth)
    page.click("#step-force")
    page.wait_for_function("document.querySelector('#step-chips .tok.gen.forced') !== null", timeout=LONG)
    assert len(chips(page)) == 1 and "forced" in title(page) and "rank 20" in title(page)


def test_try_this_4_greedy_loops_and_repetition_penalty_breaks_it(page):
    pick_preset(page, GREEDY)
    prefill(page)
    run_to_end(page)
    looped = "".join(chips(page)).replace("␣", " ")
    assert looped.count("I'm a cat.") >= 3
    # a finished run keeps its view when Run to end is pressed again
    page.click("#step-run-end")
    expect(page.locator("#step-stop")).to_contain_text("press Prefill to run again with the new settings", timeout=LONG)
    idle(page)  # the press's event has ended: what it drew is all it will draw
    assert "".join(chips(page)).replace("␣", " ") == looped
    assert page.locator("#step-dist .lc-bar").count() > 0
    # "Open More settings below the knobs, set Repetition penalty to 1.3, press Prefill"
    assert "set **Repetition penalty** to 1.3, press **Prefill**" in WALKTHROUGH
    open_advanced(page)
    set_number(page, "step-rep", "1.3")
    # the note beside the knobs is drawn from the values the page will send: Prefill after it reads 1.3
    expect(page.locator("#step-why")).to_contain_text("Penalties on", timeout=LONG)
    prefill(page)
    run_to_end(page)
    assert "".join(chips(page)).replace("␣", " ").count("I'm a cat.") == 0


def test_try_this_5_time_shows_one_prefill_pass_and_one_pass_per_token(page):
    prefill(page)
    step(page, 3)
    page.wait_for_function("document.querySelectorAll('#step-time .lc-col').length === 4", timeout=LONG)
    bars = {t["name"]: t["x"] for t in chart(page, "step-time")}
    assert bars["sampling"] == ["1", "2", "3"]
    # one prefill pass, computed here; or, once another session of this server has computed this prompt, its copy
    # from the prefix cache, drawn and named as one (visuals.step.timeline)
    assert bars.get(PREFILL_NAME) == ["prefill"] or bars.get(COPIED_NAME) == ["prefill (copy)"]


def test_preset_open_no_bar_holds_a_quarter_and_seed_1_starts_another_way(page, app_url):
    pick_preset(page, OPEN)
    prefill(page)
    assert max(filled_bars(page).values()) < 0.25 and "entropy 4.9" in title(page)
    step(page)
    first = chips(page)[0]
    # seed 1, set by a shared link: its value is in place before the page can be clicked
    slug = next(s for s, name in SLUGS.items() if name == OPEN)
    page.goto(f"{app_url}?tab=step&preset={slug}&seed=1")
    expect(page.locator("#step-prompt textarea")).to_have_value(PRESETS[OPEN].prompt, timeout=LONG)
    open_advanced(page)
    expect(page.locator("#step-seed input")).to_have_value("1", timeout=LONG)
    prefill(page)
    step(page)
    assert chips(page)[0] != first


def test_preset_high_temperature_draws_unlikely_tokens_until_min_p(page):
    def unlikely() -> int:  # chips drawn with a model probability under 0.01 (their hover text says it)
        titles = page.locator("#step-chips .tok.gen").evaluate_all("(els) => els.map((e) => e.title)")
        return sum(float(re.search(r"model p = (< )?([0-9.]+)", t)[2]) < 0.01 for t in titles)

    pick_preset(page, HOT)
    prefill(page)
    run_to_end(page)
    assert len(chips(page)) == 40 and unlikely() > 20  # "most of the 40 tokens"
    more_settings(page)
    set_number(page, "step-min-p", "0.1")
    prefill(page)
    run_to_end(page)
    assert unlikely() <= 5  # "such draws become rare"


# where each part of the loop lies on the page (not the screen: a click may have scrolled it), top and bottom in px
PAGE_BOX = """(sel) => { const e = document.querySelector(sel); if (!e || !e.getClientRects().length) return null;
  const r = e.getBoundingClientRect(); return [r.top + scrollY, r.bottom + scrollY]; }"""


def test_the_loop_fits_one_screen_at_1280x720_with_try_this_open_or_closed(page):
    prefill(page)
    for _ in range(2):
        boxes = {
            e: page.evaluate(PAGE_BOX, e)
            for e in ("#step-prefill", "#step-step", "#step-back", "#step-temperature", "#step-dist .lc-plot")
        }
        assert all(boxes.values()), boxes
        top, bottom = min(t for t, _ in boxes.values()), max(b for _, b in boxes.values())
        assert bottom - top <= 720, boxes  # one scroll position shows the buttons, a knob and the whole chart
        page.get_by_text("Try this (five steps)").click()  # opened by its label: open the 2nd time round
    page.evaluate("(y) => scrollTo(0, y)", top)
    page.screenshot(path=str(ARTIFACTS / "step-1280x720.png"))


def test_an_error_is_one_message_in_the_words_of_the_page(page):
    page.locator("#step-prompt textarea").fill("")
    page.click("#step-prefill")
    expect(page.locator("#step-message")).to_contain_text("the prompt is empty", timeout=LONG)
    assert page.locator(".error, .toast-body").count() == 0  # no "Error" stamped on the panels, no toast
    set_number(page, "step-top-p", "5", holds=False)
    # out of the slider's range: set to its end and said beside it (ui/validate.py), never gradio's own words
    beside = page.locator("#step-top-p > .lab-beside")
    expect(beside.first).to_contain_text("Top-p: 5 is above its largest value, 1: set to 1", timeout=LONG)
    assert page.locator("#step-top-p input[type=number]").input_value() == "1"
    assert "greater than maximum" not in page.content()


def test_greedy_says_it_skips_top_p(page):
    set_number(page, "step-top-p", "0.5")
    set_number(page, "step-temperature", "0")
    expect(page.locator("#step-why")).to_contain_text("takes the argmax, so top-p 0.5 is skipped", timeout=LONG)


def test_keys_step_and_go_back_but_not_while_typing(page):
    page.click("#step-start")
    page.keyboard.press("p")
    page.wait_for_function("document.querySelector('#step-dist .lc-head') !== null", timeout=LONG)
    page.keyboard.press("ArrowRight")
    wait_chips(page, 1)
    page.keyboard.press("ArrowRight")
    wait_chips(page, 2)
    page.keyboard.press("ArrowLeft")
    wait_chips(page, 1)
    page.click("#step-prompt textarea")
    page.keyboard.press("ArrowRight")  # moves the caret, not the run
    typed = len(page.locator("#step-prompt textarea").input_value()) + 1
    page.keyboard.type("p")
    # a key the page took as a shortcut would have pressed a button by now: once no event is at work, nothing moved
    idle(page)
    assert len(chips(page)) == 1
    assert len(page.locator("#step-prompt textarea").input_value()) == typed  # the key went to the box
    # an arrow key on the temperature slider redraws the chart, as letting go of the mouse does
    page.locator("#step-temperature input[type=range]").focus()
    page.keyboard.press("End")  # temperature 3
    until(page, lambda: max(filled_bars(page).values()) < 0.2, LONG / 1000, "temperature 3's flat bars")


def test_a_shared_link_opens_its_setup_and_copy_link_writes_it(browser, app_url):  # noqa: F811
    page = new_page(browser)
    page.goto(f"{app_url}?tab=step&preset=greedy-loop&temperature=0.7&projector=1")
    expect(page.locator("#step-prompt textarea")).to_have_value(PRESETS[GREEDY].prompt, timeout=LONG)
    assert page.locator("#step-temperature input[type=number]").input_value() == "0.7"
    assert page.evaluate("document.body.classList.contains('projector')")
    more_settings(page)  # the link's box is there
    page.click("#step-copy-link")
    expect(page.locator("#step-link textarea")).to_have_value(re.compile("preset=greedy-loop"), timeout=LONG)
    link = page.locator("#step-link textarea").input_value()
    assert "tab=step" in link and "temperature=0.7" in link and "projector=1" in link
    page.close()
    page = new_page(browser)
    page.goto(f"{app_url}?tab=beams")
    expect(current_lesson(page)).to_have_text("Beam search & repetition", timeout=LONG)
    page.close()


def test_every_preset_has_a_link_name():
    assert set(SLUGS.values()) == set(PRESETS) and "confident" in SLUGS


@pytest.mark.parametrize("query", ["?tab=step", "?tab=step&projector=1"])
def test_clicking_a_bar_forces_its_token_even_in_projector_mode(browser, app_url, query):  # noqa: F811
    """Try this, step 3's "(or click the bar)": the second bar, clicked, becomes the forced token."""
    page = new_page(browser, {"width": 1920, "height": 1080})
    page.goto(f"{app_url}{query}")
    page.locator("#step-prefill").wait_for(timeout=LONG)
    more_settings(page)
    expect(page.locator("#step-templated textarea")).to_have_value(re.compile("capital"), timeout=LONG)
    prefill(page)
    # the second bar's column (tokens in order of the model's probability), clicked above its short bar
    box = page.locator("#step-dist .lc-col[data-key]").nth(1).bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function("document.querySelector('#step-chips .tok.gen.forced') !== null", timeout=LONG)
    assert chips(page) == ["␣the"]
    page.close()


def test_reset_or_prefill_during_run_to_end_stops_it_and_its_views_stay_stopped(browser, app_url):  # noqa: F811
    """Reset mid-run leaves the blank page, with no "no run" error; Prefill mid-run starts its own run, the old one's
    tokens gone. (A run's last view must not arrive after either answer: ui.running.)"""
    page = new_page(browser)
    page.goto(f"{app_url}?tab=step&preset=open")
    page.locator("#step-prefill").wait_for(timeout=LONG)
    more_settings(page)  # Reset and what the model reads wait there
    expect(page.locator("#step-templated textarea")).to_have_value(re.compile("story"), timeout=LONG)
    chips = page.locator("#step-chips")
    for then in ("#step-reset", "#step-prefill"):
        page.click("#step-prefill")
        idle(page)
        prompt_only = chips.inner_text()
        page.click("#step-run-end")
        page.wait_for_function(  # a few tokens in: the run is under way (the open story runs for 100)
            "n => document.querySelector('#step-chips').innerText.length > n", arg=len(prompt_only) + 20, timeout=LONG
        )
        page.click(then)
        idle(page)
        if then == "#step-reset":
            expect(page.locator("#step-dist")).to_contain_text("Press Prefill", timeout=LONG)
            assert chips.inner_text().strip() == ""
        else:  # the new run's prompt alone: the old run's tokens are gone, and none of its views came after
            until(
                page, lambda shown=prompt_only: chips.inner_text() == shown, LONG / 1000, "the new run's prompt alone"
            )
        assert page.locator("#step-message").inner_text().strip() == ""
    page.close()
