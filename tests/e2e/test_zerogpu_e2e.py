"""The app as a ZeroGPU Space runs it, in headless Chromium: `spaces` is the test stand-in (tests/zerogpu), whose
GPU calls each run in a fresh fork with their arguments and result pickled, and which refuses a model, a tensor or a
session's run at the boundary. Every tab's main action works; a Step after a Prefill continues the same run (its
state stays in the server); the measurements cross into a worker as plain data; Cancel stops a measurement there."""

import json
import os
import re

import pytest
from playwright.sync_api import expect

from tests.helpers.actions import act
from tests.helpers.pages import idle, new_page, set_number, until
from tests.helpers.step import more_settings
from ui.launch import ROOT, free_port, start_app
from ui.tabs import specs

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
DRAWN = (
    "chart => document.querySelector(`${chart} .lc-bar`) !== null"
    " || ((document.querySelector(`${chart} .js-plotly-plot`) || {}).data || []).length > 0"
)


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    """The app under the stand-in: (its url, the stand-in's log of GPU calls)."""
    log = tmp_path_factory.mktemp("zerogpu") / "gpu-calls.jsonl"
    port = free_port()
    proc = start_app(
        port,
        PYTHONPATH=os.pathsep.join([str(ROOT / "tests" / "helpers" / "zerogpu"), str(ROOT)]),
        SPACES_ZERO_GPU="true",
        ZEROGPU_STANDIN_LOG=str(log),
    )
    yield f"http://127.0.0.1:{port}/", log
    proc.terminate()
    proc.wait(timeout=20)


def calls(log) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def opened(browser, url: str, tab: str, control: str):
    page = new_page(browser)
    page.goto(f"{url}?tab={tab}")
    page.locator(control).wait_for(timeout=300_000)  # the Space's first page: its server still starting, loaded
    idle(page)
    return page


def drawn(page, chart: str, what: str) -> None:
    until(page, lambda: page.evaluate(DRAWN, chart), 300, what)
    idle(page)


def no_error(page) -> None:
    errors = page.locator(".lab-error, .toast-body.error")
    assert errors.count() == 0, errors.all_inner_texts()


def test_a_step_after_prefill_continues_the_same_run(browser, space):
    url, log = space
    before = len(calls(log))
    page = opened(browser, url, "step", "#step-prefill")
    page.click("#step-prefill")
    drawn(page, "#step-dist", "the first distribution")
    for n in (1, 2, 3):
        page.click("#step-step")
        until(page, lambda n=n: page.locator("#step-chips .tok.gen").count() == n, 120, f"{n} generated tokens")
    page.click("#step-back")
    until(page, lambda: page.locator("#step-chips .tok.gen").count() == 2, 120, "Back to two tokens")
    idle(page)
    no_error(page)
    assert calls(log)[before:] == []  # a session's steps never ask for the GPU: its state lives in the server
    page.close()


# the lessons whose main action a test of their own here does its way: a Step continues a run, the simulated class
# steps on the scheduler, a measurement runs in a worker, Cancel reaches one
OWN_TEST = ("step", "serving", "nondeterminism", "timing")
# every other lesson: its main action as the layout test does it (tests/helpers/actions.py) and the chart it draws
IN_THE_SERVER = [spec for spec in specs() if spec.chart and spec.id not in OWN_TEST]


@pytest.mark.parametrize("tab", IN_THE_SERVER, ids=lambda tab: tab.id)
def test_every_stateful_lesson_works_on_zerogpu(browser, space, tab):
    page = opened(browser, space[0], tab.id, tab.main)
    act(page, tab)
    drawn(page, tab.chart, f"{tab.chart} to draw its data")
    no_error(page)
    page.close()


def test_the_simulated_class_steps_on_the_servers_scheduler(browser, space):
    page = opened(browser, space[0], "serving", "#serving-open")
    set_number(page, "serving-students", 2)
    page.click("#serving-open")
    expect(page.locator("#serving-status")).to_contain_text("2 simulated students are stepping", timeout=120_000)
    until(page, lambda: page.evaluate(DRAWN, "#serving-ticks"), 120, "the class's forward passes")
    page.click("#serving-stop")
    expect(page.get_by_text("Stopped 2 simulated students")).to_be_visible(timeout=60_000)
    no_error(page)
    page.close()


def test_the_measurements_run_in_a_worker_as_plain_data(browser, space):
    url, log = space
    before = len(calls(log))
    page = opened(browser, url, "nondeterminism", "#nondeterminism-run")
    for size in ("4", "8"):
        page.locator("#nondeterminism-sizes").get_by_label(size, exact=True).uncheck()
    more_settings(page, "nondeterminism")
    set_number(page, "nondeterminism-new-tokens", 3)
    page.click("#nondeterminism-run")
    drawn(page, "#nondeterminism-noise", "the temperature-0 run")
    assert "No run yet" not in page.locator("#nondeterminism-headline").inner_text()
    no_error(page)
    page.close()
    page = opened(browser, url, "quantization", "#quantization-kernels-btn")
    page.click("#quantization-kernels-btn")
    expect(page.locator("#quantization-kernels")).to_contain_text("float32", timeout=300_000)
    idle(page)
    no_error(page)
    page.close()
    ended = [c for c in calls(log)[before:] if "ended" in c]
    assert len(ended) == 2 and all(c["fn"] == "in_worker" and c["problem"] is None for c in ended), ended
    assert all(c["ended"] != c["server"] for c in ended)  # each in a worker of its own
    assert max(c["sent"] for c in ended) < 10_000  # the arguments are a few settings, never a model


def test_cancel_stops_a_measurement_in_its_worker(browser, space):
    url, log = space
    before = len(calls(log))
    page = opened(browser, url, "timing", "#timing-measure")
    page.click("#timing-measure")
    until(page, lambda: any("started" in c for c in calls(log)[before:]), 120, "the measurement's worker to start")
    page.get_by_role("button", name="Cancel", exact=True).click()
    expect(page.get_by_text(re.compile(r"Measurement cancelled after \d+ s"))).to_be_visible(timeout=120_000)
    until(page, lambda: any("ended" in c for c in calls(log)[before:]), 120, "the worker to end")
    assert [c["problem"] for c in calls(log)[before:] if "ended" in c] == [None]
    page.close()


def test_the_speculative_speed_up_is_measured_in_a_worker(browser, space):
    url, log = space
    before = len(calls(log))
    page = opened(browser, url, "speculative", "#speculative-end")
    more_settings(page, "speculative")
    set_number(page, "speculative-max-new", 8)
    page.click("#speculative-end")
    expect(page.locator("#speculative-speed")).to_contain_text("Plain decoding", timeout=300_000)
    idle(page)
    no_error(page)
    page.close()
    assert [c["problem"] for c in calls(log)[before:] if "ended" in c] == [None]
