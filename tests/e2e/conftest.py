"""The browser tests' fixtures: one app server and one headless Chromium for the whole session, and one page per
test module, on the tab the module names (`TAB = (title, a selector drawn once the tab is ready)`), its own session.
A module that leaves something running on the server when it ends defines `leave(page)`, called before the page
closes."""

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from deploy.hall import HAPROXY, Hall
from tests.helpers.pages import ACTION_MS, ARTIFACTS, new_page, open_tab
from tests.helpers.step import more_settings
from ui.launch import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_app

# an `expect` waits for its state as long as a page action may (playwright's own default is 5 s, which a loaded
# 2-core machine can exceed before the server answers); it returns as soon as the state holds
expect.set_options(timeout=ACTION_MS)


@pytest.fixture(scope="session")
def app_url():
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make browser)")
    port = free_port()
    # the server runs the model on one CPU thread: here the browser shares its two cores (a Space's visitors' browsers
    # run on their own machines), and torch's second thread, waiting for the core the browser held, made a decode step
    # in the app slower (78 ms a token against 58 ms); on a machine to itself a step takes 56 ms on one thread or two
    # and it reports a CPU name of 80 characters with its thread (tests/helpers/long_device): every page holds for it
    shim = f"{Path(__file__).parents[1] / 'helpers' / 'long_device'}{os.pathsep}{ROOT}"
    proc = start_app(port, OMP_NUM_THREADS="1", PYTHONPATH=shim)
    yield f"http://127.0.0.1:{port}/"
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="session")
def browser(app_url):
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def page(request, browser, app_url):
    """The module's tab in a fresh page at 1280x720, shared by the module's tests in their order."""
    title, ready = request.module.TAB
    ARTIFACTS.mkdir(exist_ok=True)
    page = open_tab(browser, app_url, title, ready)
    yield page
    leave = getattr(request.module, "leave", None)
    if leave is not None:
        leave(page)
    page.close()


@pytest.fixture
def step_page(browser, app_url):
    """A fresh page (its own session) at 1280x720, the projector's size, on the step tab, its "More settings" open
    (gradio draws a closed panel's controls only once it opens): the chat template has been applied to the default
    prompt."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = new_page(browser)
    page.goto(f"{app_url}?tab=step")  # the app opens on Start here
    page.locator("#step-prefill").wait_for(timeout=180_000)
    more_settings(page)
    expect(page.locator("#step-templated textarea")).to_have_value(re.compile("capital"), timeout=180_000)
    yield page
    page.close()


# the lecture hall (deploy/hall.py): two replicas, HAProxy and the rounds' Redis, for the modules that ask for it
@pytest.fixture(scope="module")
def hall():
    if not Path(HAPROXY).exists():
        pytest.fail("haproxy is not installed: `make test` installs Debian's package (make hall-tools)")
    port = free_port()
    while free_port() in range(port, port + 4):  # the replicas and the rounds' redis-server take the ports after it
        port = free_port()
    hall = Hall(replicas=2, port=port, restart=False).start()
    yield hall
    hall.stop()
