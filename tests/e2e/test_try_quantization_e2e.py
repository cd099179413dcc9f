"""The Quantization tab's "Try this" steps, done in order through the page's controls in headless Chromium on the
bundled model (float32 reference, CPU); each asserts what its text says: what the file holds, "as stored" agreeing
at every step, int4's drift all in the head, the outlier lesson, the quality table per part, the measurement's
sentence; and what a person sees go wrong around them: the Run button's count, a format switched mid-run, an empty
prompt, raw text that ends at once, Score's messages beside Score. No speed is asserted."""

import re

import pytest

from tests.helpers.pages import explained, idle, pick, set_number, tick, until
from tests.helpers.step import more_settings
from ui.quantization.handlers import RUN_N
from ui.quantization.tab import SPEC, TRY_THIS

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
RUN_S = 300  # 20 steps of three runs, or a measurement, on a shared 2-core CPU
# how many of these outputs show a progress line now (gradio 6 draws one status tracker per output it updates)
PROGRESS_SHOWN = """ids => ids.filter(id => {
  const t = document.querySelector(`${id} [data-testid=status-tracker]`);
  return t && !t.classList.contains('hide') && t.innerText.trim().length > 0;
}).length"""
TALLY = re.compile(r"Same top-1 at (\d+) of (\d+) steps?, mean KL ([\d.]+)")


TAB = (SPEC.title, "#quantization-step")  # the module's page (tests/e2e/conftest.py)


def status(page) -> str:
    return page.locator("#quantization-status").inner_text()


def run(page, fmt: str, button: str, steps: int, part: str = "layers and head") -> tuple[int, int, float]:
    """Pick the format and part, press the button and wait until the tally counts `steps` steps: (same top-1, steps,
    mean KL)."""
    pick(page, "quantization-format", fmt)
    tick(page, "quantization-part", part)
    page.click(f"#{button}")
    until(page, lambda: TALLY.search(status(page)), RUN_S, f"{fmt}'s tally")
    until(page, lambda: fmt in status(page) and int(TALLY.search(status(page))[2]) == steps, RUN_S, f"{steps} steps")
    idle(page, RUN_S)
    found = TALLY.search(status(page))
    return int(found[1]), int(found[2]), float(found[3])


def test_the_tab_opens_with_what_the_file_holds_read_from_it(page):
    text = page.locator("#quantization-file").inner_text()
    assert "SmolLM2-135M-Instruct.Q4_1.gguf holds 96.6 MB" in text and "reads 538 MB a token" in text
    rows = page.locator("#quantization-file tr").all_inner_texts()
    assert re.search(r"layer matrices \(210\)\s+Q4_1.*\s5\s+66\.4", rows[1])
    assert re.search(r"tied to the LM head\)\s+Q8_0.*\s8\.5\s+30\.1", rows[2])
    assert (
        explained(page, "#quantization-file", "Q4_1") == "Q4_1"
        and explained(page, "#quantization-file", "Q8_0") == "Q8_0"
    )
    # the intro's unit, on hover, once its closed section is opened as a student does
    how = page.locator("#quantization-how").get_by_text("How float32 and a rounded copy are compared")
    how.click()
    until(page, lambda: page.locator("#quantization-how button.lab-term").first.is_visible(), 30, "the opened intro")
    assert explained(page, "#quantization-how", "nats") == "nats"
    how.click()
    for name in ("GEMV", "fbgemm", "_weight_int8pack_mm", "wikitext-2", "simulated"):
        explained(page, ".gradio-container", name)
    # Try this sits under the controls: opened, it cannot push Format down
    assert (
        page.locator("#quantization-format").bounding_box()["y"] < page.locator("#quantization-try").bounding_box()["y"]
    )


def test_the_run_button_says_the_steps_it_takes(page):
    assert page.locator("#quantization-run").inner_text() == f"Run {RUN_N}"
    more_settings(page, "quantization")
    set_number(page, "quantization-steps", 5)
    until(page, lambda: page.locator("#quantization-run").inner_text() == "Run 5", 30, "Run 5 on the button")
    set_number(page, "quantization-steps", RUN_N)
    until(page, lambda: page.locator("#quantization-run").inner_text() == f"Run {RUN_N}", 30, f"Run {RUN_N} again")


def test_step_1_as_stored_is_float32_at_every_step(page):
    assert "Format **as stored**" in TRY_THIS
    same, steps, kl = run(page, "as stored", "quantization-run", RUN_N)
    assert (same, steps, kl) == (RUN_N, RUN_N, 0.0)
    assert "as stored (simulated" in status(page)


def test_a_format_switched_clears_the_old_run_and_says_what_the_next_step_starts(page):
    page.click("#quantization-run")  # as stored goes on from step 20; switched mid-run, its steps stop coming
    # a step past 21 shown: the run is under way (on a quiet machine it may already have ended; a switch then
    # clears the finished run, and the same is asserted)
    shown = lambda: [int(n) for n in re.findall(r"step (\d+)", status(page))]
    until(page, lambda: any(n >= 22 for n in shown()), RUN_S, "the run under way")
    pick(page, "quantization-format", "int4")
    until(page, lambda: "Now int4" in status(page), 120, "the switch said")
    idle(page)
    assert (
        page.locator("#quantization-streams .quantization-chip").count() == 0
        and "∅" in page.locator("#quantization-streams").inner_text()
    )


def test_step_2_int4_swaps_float32s_close_top_two_at_step_1(page):
    run(page, "int4", "quantization-step", 1)
    said = re.search(r"First greedy divergence at step 1.*top two were ([\d.]+) points apart there, (.*)", status(page))
    assert said and float(said[1]) < 1 and "a small change swapped them" in said[2]
    assert page.locator("#quantization-streams .quantization-split").count() == 2  # outlined on both streams


def test_step_3_int4_on_the_layers_changes_nothing_and_its_drift_is_the_heads(page):
    same, steps, kl = run(page, "int4", "quantization-run", RUN_N, "layers only")
    assert (same, steps, kl) == (RUN_N, RUN_N, 0.0) and "int4 on the layers only" in status(page)
    same, steps, kl = run(page, "int4", "quantization-step", 1, "head only")
    assert steps == 1 and kl > 0 and "int4 on the head only" in status(page)
    assert "**int4, head kept**" in TRY_THIS


def test_step_4_int8_activations_loses_the_top_token_at_about_half_the_steps(page):
    same, steps, _ = run(page, "int8-activations", "quantization-run", RUN_N)
    assert RUN_N // 4 <= same <= 3 * RUN_N // 4


def test_an_empty_prompt_says_what_to_type_and_no_preset_this_tab_lacks(page):
    prompt = page.locator("#quantization-prompt textarea")
    prompt.fill("")
    page.click("#quantization-step")
    message = page.locator("#quantization-message")
    until(page, lambda: "empty" in message.inner_text(), 60, "the empty prompt said")
    assert "type some text" in message.inner_text() and "preset" not in message.inner_text()
    prompt.fill("Write a short poem about the sea.")


def test_raw_text_that_ends_at_once_points_to_the_chat_template(page):
    more_settings(page, "quantization")
    tick(page, "quantization-template", "raw text")
    run(page, "int8", "quantization-step", 1)
    shown = status(page)  # the chat model ends its turn at step 1 on raw text
    assert "float32 stopped (eos); this chat model was trained to answer inside its chat template" in shown
    page.click("#quantization-run")  # and Run says why it does nothing
    until(page, lambda: "has stopped" in page.locator("#quantization-message").inner_text(), 60, "Run refused")
    assert "pick chat template as Prompt format" in page.locator("#quantization-message").inner_text()
    tick(page, "quantization-template", "chat template")


def test_step_5_score_per_part_with_its_own_formats_and_its_messages_beside_it(page):
    box = page.locator("#quantization-tokens input[type=number]")
    # said beside the box that caused it (ui/validate.py), where the person looks
    message = page.locator("#quantization-tokens > .lab-beside")
    for bad in ("-5", "0", "100000"):
        box.fill(bad)
        page.click("#quantization-score")
        said = f"got {bad}"
        until(page, lambda said=said: said in " ".join(message.all_inner_texts()), 60, f"{bad} said")
        assert "Held-out tokens to score" in " ".join(message.all_inner_texts())
        below = message.first.bounding_box()["y"] - box.bounding_box()["y"]
        assert 0 < below < 150, below
    box.fill("128")
    page.click("#quantization-score")
    quality = page.locator("#quantization-quality")
    until(page, lambda: "head only" in quality.inner_text(), RUN_S, "the quality table per part")
    idle(page, RUN_S)
    rows = {tuple(r.split("\t")[:2]): r for r in quality.locator("tr").all_inner_texts()}
    assert rows[("as stored", "layers and head")].endswith("100.0%")
    assert rows[("int4", "layers only")].endswith("100.0%")
    assert not rows[("int4", "head only")].endswith("100.0%")
    # Score's own Cancel stops it between two rows, and says so under Score
    box.fill("200")
    page.click("#quantization-score")
    # at work: its progress says which row it scores (a Cancel pressed as a run starts may come before it does)
    scoring = page.locator("#quantization-quality [data-testid=status-tracker]")
    until(page, lambda: "scoring" in scoring.inner_text(), 120, "Score at work")
    page.click("#quantization-score-cancel")
    # a message that names no control stays in the line under Score
    line = page.locator("#quantization-score-message")
    until(page, lambda: "scoring cancelled" in line.inner_text(), RUN_S, "the cancel said")
    idle(page, RUN_S)
    for name in ("as stored", "int4"):
        page.locator("#quantization-score-formats").get_by_label(name, exact=True).uncheck()
    page.click("#quantization-score")
    until(page, lambda: "Nothing to score" in quality.inner_text(), 60, "the table cleared")


def test_step_6_the_measurement_and_the_kernels_say_why_int8_and_int4_run_simulated(page):
    page.locator("#quantization-time-formats").get_by_label("int8", exact=True).uncheck()  # int8-activations alone
    page.click("#quantization-measure")
    outputs = ["#quantization-speed", "#quantization-gained", "#quantization-speed-table"]
    until(page, lambda: page.evaluate(PROGRESS_SHOWN, outputs), 60, "Measure's progress")
    assert page.evaluate(PROGRESS_SHOWN, outputs) == 1  # one progress line, not one per output
    said = page.locator("#quantization-gained")
    until(page, lambda: "gained more" in said.inner_text(), RUN_S, "the sentence on which phase gained")
    assert re.search(r"int8-activations.*(decode|prefill) gained more", said.inner_text(), re.S)
    assert "fbgemm" in page.locator("#quantization-speed-table").inner_text()
    page.click("#quantization-kernels-btn")
    table = page.locator("#quantization-kernels")
    until(page, lambda: "F.linear float32" in table.inner_text(), RUN_S, "the kernel table")
    idle(page)
    text, said = table.inner_text(), page.locator("#quantization-kernels-said").inner_text()
    assert "GB/s" in text and "fbgemm" in text  # a row per real kernel, float32's first
    assert text.index("F.linear float32") < text.index("fbgemm")
    # which formats run simulated is the app's choice on this device, said beside the measured numbers
    assert "The app runs int8 simulated on this device." in said
    assert "The app runs int4 simulated on this device." in said
