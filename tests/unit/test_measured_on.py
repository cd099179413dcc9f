"""A number a lesson's text quotes was measured on one run (ui.context.MEASURED_RUN): on any other, the sentence that
quotes it names that run, so no one reads it as this run's."""

import pytest

from ui.beams.tab import PRESETS as BEAM_PRESETS
from ui.beams.tab import note
from ui.context import MEASURED_ON, AppConfig, measured_on, quoting, quoting_steps, run_of
from ui.start.plans import PLANS
from ui.start.tab import step_html
from ui.step.lessons import DEFAULT_PRESET, WALKTHROUGH
from ui.step.view import start_line

MEASURED = AppConfig(device="cpu")  # the defaults on a machine without CUDA: the run the numbers were measured on
OTHERS = {
    "int4 weights": AppConfig(device="cpu", weights="int4"),
    "bfloat16": AppConfig(device="cpu", dtype="bfloat16"),
    "another model": AppConfig("tiny-random", device="cpu"),
}


def test_the_run_the_numbers_were_measured_on_is_the_apps_default_on_a_cpu():
    assert run_of(MEASURED) == ("smollm2-135m", "cpu", "float32", "float32")
    assert measured_on(MEASURED) == ""
    assert quoting("p = 0.77", MEASURED) == "p = 0.77"
    assert quoting_steps(WALKTHROUGH, MEASURED) == WALKTHROUGH


@pytest.mark.parametrize("run", OTHERS.values(), ids=OTHERS.keys())
def test_on_any_other_run_the_text_names_the_run_its_numbers_come_from(run):
    assert quoting("p = 0.77", run) == f"Measured on {MEASURED_ON}, not on this run: p = 0.77"
    steps = quoting_steps(WALKTHROUGH, run)
    assert steps.startswith(f"*Measured on {MEASURED_ON}, not on this run:*\n\n1. ") and steps.endswith(WALKTHROUGH)
    assert MEASURED_ON in start_line(DEFAULT_PRESET, run) and MEASURED_ON not in start_line(DEFAULT_PRESET, MEASURED)
    assert MEASURED_ON in note(BEAM_PRESETS["2 + 2: a more probable answer"], run)


@pytest.mark.parametrize("step", [s for plan in PLANS for s in plan.steps], ids=lambda s: s.notice[:40])
def test_a_plans_notice_names_the_run_where_it_quotes_what_the_model_measured(step):
    assert MEASURED_ON not in step_html(step, MEASURED)
    assert (MEASURED_ON in step_html(step, OTHERS["int4 weights"])) == step.quotes


def test_a_notice_that_quotes_a_number_of_the_model_is_marked_as_quoting():
    """The notices left unmarked hold on any run: no model (the sandbox), a rule, or a sentence the page writes."""
    unmarked = [s.notice for plan in PLANS for s in plan.steps if not s.quotes]
    assert any("22,782" in n for n in unmarked)  # the sandbox's typed logits: no model in it
    for words in ("0.7 ahead", "4.9 bits", "100×", "77%", "0.37", "about 6", "under 10%", "0.5 at batch 1"):
        assert not any(words in n for n in unmarked), words
