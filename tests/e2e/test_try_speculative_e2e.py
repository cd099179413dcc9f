"""The Speculative decoding tab's "Try this" steps, done through the page's controls in headless Chromium on the
bundled model (float32, CPU); each asserts what its text says is drawn: the round's chips, the status line, the
run's caption and the verify figure (HTML charts inside the tab's two patched views, read by `figure`). Greedy
runs are deterministic, so the counts are exact; the sampled step uses the preset's seed (4), chosen so that a kept
and a rejected guess both come within three rounds. Speed is measured and shown, never asserted: a test does not time
the machine."""

import re

import pytest

from tests.helpers.pages import (
    ARTIFACTS,
    choose_preset,
    explained,
    figure,
    idle,
    set_number,
    until,
)
from tests.helpers.step import more_settings
from ui.speculative.tab import SPEC, TRY_THIS

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
RUN_S = 300  # a speculative run and the plain run beside it, on a shared 2-core CPU


TAB = (SPEC.title, "#speculative-buttons")  # the module's page (tests/e2e/conftest.py)


def status(page) -> str:
    return page.locator("#speculative-status").inner_text()


def chips(page, style: str) -> int:
    return page.locator(f"#speculative-chips .speculative-chip.{style}").count()


def press_round(page, n: int) -> str:
    page.click("#speculative-round")
    until(page, lambda: f"Round {n}." in status(page), 120, f"round {n}")
    idle(page)  # the chips and charts of the round are drawn by the same event, read once it has ended
    return status(page)


def run_to_end(page, press: bool = True) -> str:
    """Run to end (pressed here unless `press` is False), then plain decoding beside it: returns the run's caption once
    the speed-up is on the page."""
    if press:
        page.click("#speculative-end")
    until(
        page, lambda: "Plain decoding" in page.locator("#speculative-speed").inner_text(), RUN_S, "the side-by-side run"
    )
    idle(page, RUN_S)
    return page.locator("#speculative-run-text").inner_text()


def per_pass(caption: str) -> float:
    return float(re.search(r"([\d.]+) tokens per pass", caption).group(1))


COLOURS = [  # (the word in step 1, the chip's class, the CSS property that shows it, the colour drawn)
    ("yellow", "speculative-match", "backgroundColor", "rgba(240, 228, 66"),
    ("purple-outlined", "speculative-source", "borderTopColor", "rgb(204, 121, 167)"),
    ("Blue", "speculative-ok", "borderTopColor", "rgb(0, 114, 178)"),
    ("vermillion", "speculative-no", "borderTopColor", "rgb(213, 94, 0)"),
    ("orange", "speculative-bonus", "borderTopColor", "rgb(230, 159, 0)"),
]


# whether two boxes on the page cover none of each other
APART = """([a, b]) => {
  const [p, q] = [a, b].map(s => document.querySelector(s).getBoundingClientRect());
  const apart = p.right <= q.left || q.right <= p.left || p.bottom <= q.top || q.bottom <= p.top;
  return p.width > 0 && q.width > 0 && apart;
}"""


def apart(page, a: str, b: str) -> bool:
    return page.evaluate(APART, [a, b])


def samplers(page) -> None:
    """Open "More settings" (closed by default; a sampling preset opens it), where the seed and the knobs are."""
    more_settings(page, "speculative")
    page.locator("#speculative-seed input").wait_for()


def test_steps_1_and_2_rounds_copy_the_prompt_and_back_replays_the_last(page):
    assert "Round** three times" in TRY_THIS and "keeps all eight guesses" in TRY_THIS
    page.click("#speculative-reset")
    page.click("#speculative-prefill")
    until(page, lambda: "Prefilled" in status(page), 120, "the prefill")
    assert "0 of 8 kept" in press_round(page, 1)  # guesses copied from the system prompt
    # each verdict named under its own bar: the rejected first guess, then seven never checked
    marks = [label.split(" ")[0] for label in figure(page, "speculative-verify")["labels"] if label]
    assert marks == ["✗"] + ["·"] * 7, marks
    # the words a student cannot decode are explained where they appear, and a count of one reads as one
    assert explained(page, "#speculative-status", "kept") == "0 of 8 kept"
    assert explained(page, "#speculative-status", "KV cache") == "KV cache" and "cropped back to" in status(page)
    assert "wrote 1 token for one pass" in status(page)
    assert "1 token in 1 target pass:" in page.locator("#speculative-run-text").inner_text()
    assert "proposed nothing" in press_round(page, 2)
    assert explained(page, "#speculative-status", "kept") == "0 of 0 kept"
    assert chips(page, "speculative-bonus") == 1  # a round that kept nothing still adds the target's own token
    press_round(page, 3)
    # the matched token and its earlier occurrence, the copied guesses: 5 kept, the misspelt one rejected, 2 unseen
    assert chips(page, "speculative-match") >= 2 and chips(page, "speculative-source") >= 1
    assert (chips(page, "speculative-ok"), chips(page, "speculative-no"), chips(page, "speculative-skip")) == (5, 1, 2)
    assert (
        chips(page, "speculative-bonus") == 1
        and "+1 target" in page.locator("#speculative-chips .speculative-bonus").inner_text()
    )
    # the colour words of step 1 are the colours drawn, each naming one kind of chip
    step_1 = TRY_THIS.split("\n2. ")[0]
    for word, style, prop, colour in COLOURS:
        assert step_1.count(word) == 1, word
        drawn = page.locator(f"#speculative-chips .speculative-chip.{style}").first.evaluate(
            f"e => getComputedStyle(e).{prop}"
        )
        assert colour in drawn, (word, drawn)
    assert "proposed nothing" in press_round(page, 4)
    assert "8 of 8 kept" in press_round(page, 5)
    before = page.locator("#speculative-chips").inner_text(), page.locator("#speculative-text").inner_text()
    page.screenshot(path=str(ARTIFACTS / "try-speculative-round5.png"), full_page=True)
    assert apart(page, "#speculative-rounds", "#speculative-positions")  # the run's two charts side by side, apart
    page.click("#speculative-back")
    until(page, lambda: "Round 4." in status(page), 60, "round 4 again after Back")
    assert page.locator("#speculative-text").inner_text() != before[1]
    assert len(figure(page, "speculative-run")["data"][0]["x"]) == 4  # the per-round chart holds four rounds again
    press_round(page, 5)
    assert (page.locator("#speculative-chips").inner_text(), page.locator("#speculative-text").inner_text()) == before


# each progress indicator on screen: its kind (a bar, or its text) and the id of the output it covers
PROGRESS_OVER = """
() => [...document.querySelectorAll('.progress-level, .progress-text')].filter(e => e.getClientRects().length)
  .map(e => [e.classList.contains('progress-level') ? 'bar' : 'text', (e.closest('[id]') || {}).id])
"""


def with_a_bar(page) -> list | None:
    """The progress indicators on screen, once a progress bar is among them."""
    shown = page.evaluate(PROGRESS_OVER)
    return shown if any(kind == "bar" for kind, _ in shown) else None


def test_step_3_run_to_end_writes_more_than_6_tokens_a_pass_and_the_same_text(page):
    assert "more than 6 tokens per pass" in TRY_THIS
    page.click("#speculative-end")
    # one progress bar, over the round's view, while the rounds run (not one per output drawn on the chips)
    shown = until(page, lambda: with_a_bar(page), 120, "the run's progress bar")
    where = {where for _, where in shown}
    assert [kind for kind, _ in shown].count("bar") == 1 and where == {"speculative-round-view"}, shown
    caption = run_to_end(page, press=False)
    assert per_pass(caption) > 6
    # greedy: the speculative text is plain decoding's, token for token, and the page says so beside the timing
    assert "same tokens" in page.locator("#speculative-speed").inner_text()
    assert len(figure(page, "speculative-timeline")["data"]) == 5  # prefill, draft, verify, accept, plain passes
    page.screenshot(path=str(ARTIFACTS / "try-speculative-run.png"), full_page=True)


def test_step_4_an_open_story_gives_lookup_little_to_copy(page):
    choose_preset(page, "speculative-preset", "Open story: nothing to copy", "speculative-status")
    caption = run_to_end(page)
    assert per_pass(caption) < 1.2
    assert "same tokens" in page.locator("#speculative-speed").inner_text()


def test_step_5_early_exit_guesses_badly(page):
    choose_preset(page, "speculative-preset", "Early exit: cheap, mostly wrong", "speculative-status")
    caption = run_to_end(page)
    kept = int(re.search(r"\((\d+)%\)", caption).group(1))
    assert kept < 10 and per_pass(caption) < 1.2
    assert "no earlier occurrence" not in status(page)  # that is prompt lookup's reason, never early exit's
    # a round with nothing to guess gives early exit's own reason: one token left, the target writes it alone
    samplers(page)
    set_number(page, "speculative-max-new", 1)
    page.click("#speculative-prefill")
    until(page, lambda: "Prefilled" in status(page), 120, "the prefill")
    said = press_round(page, 1)
    assert "proposed nothing (one token was left before max new tokens" in said
    assert "no earlier occurrence" not in said


def test_step_6_sampling_keeps_a_guess_below_the_bar_and_rejects_one_within_three_rounds(page):
    assert "(temperature 1, seed 4)" in TRY_THIS and "**Round** three times" in TRY_THIS
    choose_preset(page, "speculative-preset", "Sampling: the accept rule", "speculative-status")
    samplers(page)
    assert page.locator("#speculative-seed input").input_value() == "4"
    page.click("#speculative-prefill")
    until(page, lambda: "Prefilled" in status(page), 120, "the prefill")
    kept = rejected = 0
    for n in (1, 2, 3):
        press_round(page, n)
        data = {t["name"]: t for t in figure(page, "speculative-verify")["data"]}
        if "uniform u (keep if below)" not in data:
            continue  # a round with no guess
        u, bar = data["uniform u (keep if below)"], data["chance to keep"]
        chance = dict(zip(bar["x"], bar["y"]))
        kept += sum(y < chance[x] for x, y in zip(u["x"], u["y"]))
        rejected += sum(y >= chance[x] for x, y in zip(u["x"], u["y"]))
        if n == 3:
            assert "a draw from the residual" in status(page)  # after a rejection the bonus comes from the residual
    assert kept >= 1 and rejected >= 1
    page.screenshot(path=str(ARTIFACTS / "try-speculative-sampling.png"), full_page=True)


@pytest.mark.parametrize(
    ("box", "value", "said"),
    [
        ("speculative-top_k", "-4", "Top-k must be a whole number in [0, 200] (0 = off), got -4"),
        ("speculative-seed", "-4", "Seed must be a whole number in [0, 4294967295], got -4"),
        (
            "speculative-l",
            "",
            "Exit layer L (early exit) must be a whole number in [1, 29] (the model has 30 layers), got an empty box",
        ),
    ],
)
def test_a_value_out_of_range_is_refused_in_the_apps_words_and_kept_as_typed(page, box, value, said):
    choose_preset(page, "speculative-preset", "Early exit: cheap, mostly wrong", "speculative-status")
    samplers(page)
    field = page.locator(f"#{box} input")
    field.fill(value)
    field.press("Tab")
    page.click("#speculative-prefill")
    until(page, lambda: said in page.locator("#speculative-message").inner_text(), 120, f"the message {said!r}")
    idle(page)
    assert field.input_value() == value  # nothing changed it silently
    assert page.locator(".error").count() == 0  # no "Error" badge on an output: the message line says it
