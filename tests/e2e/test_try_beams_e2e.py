"""The Beam search tab's "Try this" steps and presets, done through the page's controls in headless Chromium on the
bundled model (float32, CPU); each asserts what its text says is drawn: the tree's traces, the status line and the
greedy-vs-beam table. The repetition panel's steps are in test_try_repetition_e2e.py."""

import re

import pytest

from tests.helpers.contrast import contrast_problems
from tests.helpers.pages import ARTIFACTS, choose_preset, figure, idle, set_number, until
from tests.helpers.step import more_settings
from ui.beams.tab import SPEC

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
RUN_S = 400  # a 40-token search with four beams on a shared 2-core CPU


TAB = (SPEC.title, "#beams-step")  # the module's page (tests/e2e/conftest.py)


def status(page) -> str:
    return page.locator("#beams-status").inner_text()


def steps_taken(page) -> int:
    return int(re.search(r"Step (\d+) of at most", status(page)).group(1))


def compared(page) -> dict[str, dict]:
    """The greedy-vs-beam table: {'greedy': {...}, 'beam': {...}} with text, tokens and total log p."""
    rows = page.locator("#beams-compare-text tbody tr").all_inner_texts()
    out = {}
    for row in rows:
        name, text, tokens, logp, _ = row.split("\t")
        out["greedy" if name == "greedy" else "beam"] = {
            "text": text.replace(" ✂", "").strip(),
            "tokens": int(tokens),
            "logp": float(logp),
        }
    return out


def run_to_end(page, settings: str) -> dict:
    """Press Run to end and wait until the status line reports a stopped search with `settings` in its label."""
    page.click("#beams-end")
    until(page, lambda: "Stopped" in status(page) and settings in status(page), RUN_S, f"a search with {settings}")
    idle(page, RUN_S)
    return until(page, lambda: len(c := compared(page)) == 2 and c, 60, "greedy scored beside the search")


def verdict(page) -> str:
    return page.locator("#beams-compare-text").inner_text()


def test_the_beam_search_try_this_steps_do_what_they_say(page):
    # 1. the 2 + 2 preset (the default); Step three times: live beams in blue, pruned candidates as grey dots
    assert page.locator("#beams-preset input").input_value() == "2 + 2: a more probable answer"
    for n in (1, 2, 3):
        page.click("#beams-step")
        until(page, lambda n=n: f"Step {n} of at most" in status(page), 120, f"beam step {n}")
    idle(page)  # the tree is drawn by the step's event
    names = {t["name"] for t in figure(page, "beams-tree")["data"]}
    assert {"live beam", "pruned"} <= names
    # 2. run to the end: greedy's sentence at -9.25, beam search's "2 + 2 = 4" at -4.60, about 100x more probable
    c = run_to_end(page, "length penalty 1 · early stopping False")
    assert c["greedy"]["text"] == "The answer to this classic math problem is 4."
    assert c["greedy"]["logp"] == pytest.approx(-9.25, abs=0.02)
    assert c["beam"]["text"] == "2 + 2 = 4" and c["beam"]["logp"] == pytest.approx(-4.60, abs=0.02)
    assert 50 < float(re.search(r"([\d.]+)× as likely", verdict(page)).group(1)) < 200
    answer, full_steps = c["beam"]["text"], steps_taken(page)
    # 3. length penalty 2: a 20-token answer, less probable than greedy's; back at 1 with early stopping True: the
    #    same answer as in step 2, three steps sooner
    more_settings(page, "beams")
    set_number(page, "beams-penalty", 2)
    c = run_to_end(page, "length penalty 2 ·")
    assert c["beam"]["tokens"] == 20 and c["beam"]["logp"] < c["greedy"]["logp"]
    assert "Greedy's sequence is more probable" in verdict(page)
    set_number(page, "beams-penalty", 1)
    page.locator("#beams-early").get_by_text("True: stop once").click()
    c = run_to_end(page, "length penalty 1 · early stopping True")
    assert c["beam"]["text"] == answer and steps_taken(page) == full_steps - 3
    # 4. the open-ended story: a fairy-tale opening; name a color: a stock "as an AI" refusal where greedy names one
    choose_preset(page, "beams-preset", "open-ended story: the cliché", "beams-status")
    c = run_to_end(page, "4 beams")
    assert c["beam"]["text"].startswith("A long time ago, in a land far, far away")
    assert c["beam"]["logp"] > c["greedy"]["logp"]
    choose_preset(page, "beams-preset", "name a color: the safe refusal", "beams-status")
    c = run_to_end(page, "4 beams")
    assert "as an AI" in c["beam"]["text"] and "indigo" in c["greedy"]["text"]
    # 5. one beam is greedy: the same sequence, and the tree a single path with its pruned alternatives
    choose_preset(page, "beams-preset", "2 + 2: a more probable answer", "beams-status")
    set_number(page, "beams-k", 1)
    c = run_to_end(page, "1 beam ·")
    assert c["beam"]["text"] == c["greedy"]["text"] and "same sequence" in verdict(page)
    tree = figure(page, "beams-tree")["data"]
    answer = next(t["x"] for t in tree if t["name"] == "the answer")
    assert sorted(answer) == list(range(1, c["beam"]["tokens"] + 1)), "one node per step on the answer's path"
    assert any(t["name"] == "pruned" and t["x"] for t in tree)
    page.screenshot(path=str(ARTIFACTS / "e2e-beams.png"), full_page=True)


def test_the_raw_text_preset_runs_every_beam_to_max_new_tokens(page):
    # the other presets' descriptions are asserted in the steps above (2 + 2, story, color)
    choose_preset(page, "beams-preset", "raw text continuation", "beams-status")
    c = run_to_end(page, "4 beams")
    assert "it reached max new tokens" in status(page)
    assert c["beam"]["tokens"] == 20 and c["beam"]["logp"] > c["greedy"]["logp"]


def test_the_beam_tab_text_and_charts_meet_wcag_aa_contrast(page):
    assert contrast_problems(page) == []
