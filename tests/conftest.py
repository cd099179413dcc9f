"""Shared fixtures: the tiny random model (no downloads), the bundled model (loaded once), and for the browser tests
one app server and one headless Chromium for the whole session (each module opens its own pages)."""

import os
import re
from pathlib import Path

import pytest
from hypothesis import settings

from decoding.models import BUNDLED, TINY, load_model

# property tests draw the same examples on every run: a suite that passed passes again, so a landing is never blocked
# by an example drawn for the first time (`--hypothesis-profile=default` draws new ones)
settings.register_profile("suite", derandomize=True, database=None, print_blob=True)
settings.load_profile("suite")
# the engine tests run on the CPU; DECODING_LAB_TEST_DEVICE=cuda runs the model tests on a GPU instead (float32)
DEVICE = os.environ.get("DECODING_LAB_TEST_DEVICE", "cpu")


@pytest.fixture(scope="session")
def tiny():
    return load_model(TINY, device=DEVICE, dtype="float32")


@pytest.fixture(scope="session")
def bundled():
    return load_model(BUNDLED, device=DEVICE, dtype="float32")


@pytest.fixture(scope="session")
def app_url():
    from tests.test_app_e2e import CHROMIUM, free_port, start_app

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make browser)")
    port = free_port()
    proc = start_app(port)
    yield f"http://127.0.0.1:{port}/"
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="session")
def browser(app_url):
    from playwright.sync_api import sync_playwright

    from tests.test_app_e2e import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def step_page(browser, app_url):
    """A fresh page (its own session) at 1280x720, the projector's size, on the step tab's first screen: the chat
    template has been applied to the default prompt."""
    from playwright.sync_api import expect

    from tests.pages import new_page
    from tests.test_app_e2e import ARTIFACTS

    ARTIFACTS.mkdir(exist_ok=True)
    page = new_page(browser)
    page.goto(app_url)
    expect(page.locator("#step-templated textarea")).to_have_value(re.compile("capital"), timeout=180_000)
    yield page
    page.close()
