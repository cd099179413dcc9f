"""The Quantization tab's "Try this" steps, done in order through the page's controls in headless Chromium on the
bundled model (float32 reference, CPU); each asserts what its text says: the tally in the status line, the outlined
first divergence on both streams, and the measurement's sentence on which phase gained. No speed is asserted."""

import re

import pytest

from tests.pages import idle, open_tab, pick, until
from ui.quantization_handlers import RUN_N
from ui.quantization_tab import TRY_THIS

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
RUN_S = 300  # 20 steps of three runs, or a measurement, on a shared 2-core CPU
TALLY = re.compile(r"Same top-1 at (\d+) of (\d+) steps?")


@pytest.fixture(scope="module")
def page(browser, app_url):
    page = open_tab(browser, app_url, "Quantization", "#q-step")
    yield page
    page.close()


def status(page) -> str:
    return page.locator("#q-status").inner_text()


def run(page, fmt: str, button: str, steps: int) -> tuple[int, int]:
    """Pick the format, press the button and wait until the tally counts `steps` steps: (same top-1, steps)."""
    pick(page, "q-format", fmt)
    page.click(f"#{button}")
    until(page, lambda: TALLY.search(status(page)), RUN_S, f"{fmt}'s tally")
    until(page, lambda: fmt in status(page) and int(TALLY.search(status(page))[2]) == steps, RUN_S, f"{steps} steps")
    idle(page, RUN_S)
    found = TALLY.search(status(page))
    return int(found[1]), int(found[2])


def test_step_1_int8_weight_only_keeps_the_top_token_at_almost_every_step(page):
    assert "Format **int8**" in TRY_THIS
    same, steps = run(page, "int8", "q-run", RUN_N)
    assert steps == RUN_N and same >= RUN_N - 2


def test_step_2_int8_activations_loses_the_top_token_at_about_half_the_steps(page):
    same, steps = run(page, "int8-activations", "q-run", RUN_N)
    assert RUN_N // 4 <= same <= 3 * RUN_N // 4


def test_step_3_the_first_greedy_divergence_is_marked_where_the_top_two_were_close(page):
    page.click("#q-reset")
    idle(page)
    run(page, "int4", "q-step", 1)
    said = re.search(r"First greedy divergence at step 1.*top two were ([\d.]+) points apart", status(page))
    assert said and float(said[1]) < 1
    assert page.locator("#q-streams .q-split").count() == 2  # outlined on both streams
    run(page, "int4", "q-run", RUN_N + 1)
    rows = page.locator("#q-streams .q-row").all_inner_texts()
    assert rows[0] != rows[1] and page.locator("#q-streams .q-after").count() >= 2 * RUN_N


def test_step_4_the_measurement_says_which_phase_gained(page):
    for name in ("bfloat16", "int8", "int4", "int4-g64"):
        page.get_by_label(name, exact=True).uncheck()
    page.click("#q-measure")
    said = page.locator("#q-gained")
    until(page, lambda: "gained more" in said.inner_text(), RUN_S, "the sentence on which phase gained")
    assert re.search(r"int8-activations.*(decode|prefill) gained more", said.inner_text(), re.S)
    assert "fbgemm" in page.locator("#q-speed-table").inner_text()


def test_step_5_the_kernels_timed_on_the_models_matrices_say_why_int8_and_int4_are_simulated(page):
    assert "Time the kernels" in TRY_THIS and "simulated" in TRY_THIS.split("5. ")[1]
    page.click("#q-kernels-btn")
    table = page.locator("#q-kernels")
    until(page, lambda: "F.linear float32" in table.inner_text(), RUN_S, "the kernel table")
    idle(page)
    text, said = table.inner_text(), page.locator("#q-kernels-said").inner_text()
    assert "GB/s" in text and "fbgemm" in text  # a row per real kernel, float32's first
    assert text.index("F.linear float32") < text.index("fbgemm")
    # which formats run simulated is the app's choice on this device, said beside the measured numbers
    assert "The app runs int8 simulated on this device." in said
    assert "The app runs int4 simulated on this device." in said
    assert re.search(r"float32 streams the layers' \d+ MB at [\d.]+ GB/s", said)
