"""Each lesson's main action as the browser tests do it, to fill its tab: its spec (ui/tabs.py) names the control
(`main`) and what the action draws first (`chart`). A lesson's action is one press of its `main`, unless it is written
here."""

from tests.helpers.pages import idle, set_number
from ui.tabs import TabSpec


def prefill_then_step(page) -> None:
    """The step tab's chart after Prefill, then its chips and stop line after a Step."""
    page.click("#step-prefill")
    idle(page)
    page.click("#step-step")


def cooler(page) -> None:
    """The sandbox has no button: a new temperature redraws its charts."""
    set_number(page, "sandbox-temperature", 0.5)


def one_batch_run(page) -> None:
    """Run with batch 2 alone: the same page as with every size, in a quarter of the time."""
    for size in ("4", "8"):
        page.locator("#nondeterminism-sizes").get_by_label(size, exact=True).uncheck()
    page.click("#nondeterminism-run")


def round_after_prefill(page) -> None:
    page.click("#speculative-prefill")
    idle(page)
    page.click("#speculative-round")


def two_steps(page) -> None:
    """The JSON preset's first Step is all forced (no chart); the second samples."""
    for _ in range(2):
        page.click("#constrained-step")
        idle(page)


# the lessons whose main action is more than one press of their main control, by link id
ACTIONS = {
    "step": prefill_then_step,
    "sandbox": cooler,
    "nondeterminism": one_batch_run,
    "speculative": round_after_prefill,
    "constrained": two_steps,
}


def act(page, tab: TabSpec) -> None:
    """Do the lesson's main action on its open tab."""
    action = ACTIONS.get(tab.id)
    action(page) if action is not None else page.click(tab.main)
