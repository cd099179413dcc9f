"""The Temperature 0 & batching tab's "Try this" steps, done through the page's controls in headless Chromium on the
bundled model (CPU); each asserts what its text says is drawn. Which batch sizes diverge depends on the CPU's
kernels, so the steps claim only what holds on every CPU: padding moves the logits, a flip needs a gap under twice
the noise, batch-invariant rows are bit-identical, and float32's noise is about 1e-4 or less."""

import re

import pytest

from tests.helpers.contrast import contrast_problems
from tests.helpers.pages import ARTIFACTS, figure, idle, set_number, until
from tests.helpers.step import more_settings
from ui.nondeterminism.tab import SPEC

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
RUN_S = 400  # one Run or Many runs on a shared 2-core CPU


TAB = (SPEC.title, "#nondeterminism-run")  # the module's page (tests/e2e/conftest.py)


def run(page, label: str) -> None:
    """Press Run and wait for the charts of a run whose label has `label` (device · dtype · condition)."""
    page.click("#nondeterminism-run")
    until(
        page,
        lambda: label in (figure(page, "nondeterminism-scatter") or {}).get("title", ""),
        RUN_S,
        f"a run ({label})",
    )
    idle(page, RUN_S)  # the texts and notes beside the chart, read once the run's event has ended


def largest_noise(page) -> float:
    return float(
        re.search(r"largest noise was ([\d.e+-]+)", page.locator("#nondeterminism-noise-note").inner_text())[1]
    )


def test_the_batching_try_this_steps_do_what_they_say(page):
    # 1. Run with the defaults (padded, bfloat16): padding moves row 0's logits (whether a move flips a token depends
    # on the CPU's kernels: this one moves them by up to 0.9 and, in 12 tokens, flips none)
    run(page, "bfloat16 · padded")
    texts = page.locator("#nondeterminism-texts")
    assert largest_noise(page) > 0
    # 2. where a batch wrote another text, the highlighted token is the first that differs; struck is what solo wrote
    if texts.locator(".bl-badge.bl-diff").count():
        flip, struck = texts.locator(".bl-flip").first, texts.locator(".bl-struck .bl-tok").first
        assert flip.inner_text() != struck.inner_text()
    # 3. every ★ on the gap-vs-noise scatter has its gap on or below the line gap = 2 x noise
    stars = next(
        (t for t in figure(page, "nondeterminism-scatter")["data"] if t["name"].startswith("★")), {"x": [], "y": []}
    )
    assert all(gap <= 2 * noise * (1 + 1e-9) for noise, gap in zip(stars["x"], stars["y"]))
    # 4. the fix: every batch in batch-invariant mode writes the solo text, noise exactly 0, and its cost is read out
    assert page.get_by_text("identical to solo · noise 0").count() == 3
    fix = page.locator("#nondeterminism-fix-note").inner_text()
    assert "3 of 3 batch sizes wrote the solo text" in fix and "exactly 0 at every step" in fix and "tok/s" in fix
    # 5. same-length copies: only the batch size changes the kernels; then float32: the noise falls to 1e-4 or less
    # (what steps 5 and 6 claim holds at any length: 4 new tokens instead of 12 keep the suite quick)
    more_settings(page, "nondeterminism")
    set_number(page, "nondeterminism-new-tokens", 4)
    page.locator("#nondeterminism-condition").get_by_text("same-length").click()
    run(page, "bfloat16 · same-length")
    assert page.locator("#nondeterminism-texts .bl-row").count() == 4  # solo and batches 2, 4, 8, each with its noise
    page.locator("#nondeterminism-dtype").get_by_text("float32", exact=True).click()
    run(page, "float32 · same-length")
    noise = page.locator("#nondeterminism-noise-note").inner_text()
    assert "bit-identical" in noise or largest_noise(page) <= 1e-4
    # 6. Many runs: every prompt's distinct completions counted, alone and with batchmates
    page.click("#nondeterminism-many")
    note = until(
        page,
        lambda: "distinct completions" in (t := page.locator("#nondeterminism-tally-note").inner_text()) and t,
        RUN_S,
        "the tally",
    )
    distinct = [int(n) for n in re.findall(r"(\d+) distinct in \d+ runs", note)]
    assert distinct and all(n >= 1 for n in distinct)
    assert figure(page, "nondeterminism-tally")["data"], "the tally is drawn"
    page.screenshot(path=str(ARTIFACTS / "e2e-batching.png"), full_page=True)


def test_the_batching_tab_text_and_charts_meet_wcag_aa_contrast(page):
    assert contrast_problems(page) == []
