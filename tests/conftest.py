"""Shared fixtures: the tiny random model (no downloads) and the bundled model (loaded once). The browser tests'
fixtures (one app server, one headless Chromium, a page per module) are in tests/e2e/conftest.py."""

import os

import pytest
from hypothesis import settings

from decoding.models import BUNDLED, TINY, load_model
from tests.helpers.redis_server import redis_url  # noqa: F401 -- a fixture: one redis-server for the session

# property tests draw the same examples on every run: a suite that passed passes again, so a landing is never blocked
# by an example drawn for the first time (`--hypothesis-profile=default` draws new ones)
settings.register_profile("suite", derandomize=True, database=None, print_blob=True)
settings.load_profile("suite")
# the engine tests run on the CPU; DECODING_LAB_TEST_DEVICE=cuda runs the model tests on a GPU instead (float32)
DEVICE = os.environ.get("DECODING_LAB_TEST_DEVICE", "cpu")


def pytest_addoption(parser):
    parser.addoption(
        "--lanes",
        action="store_true",
        help="with -n 2: the browser tests in one worker, every other test file in the other (tests/helpers/lanes.py)",
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("lanes"):
        from tests.helpers.lanes import Lanes  # only where pytest-xdist runs the suite

        return Lanes(config, log)
    return None


@pytest.fixture(scope="session")
def tiny():
    return load_model(TINY, device=DEVICE, dtype="float32")


@pytest.fixture(scope="session")
def bundled():
    return load_model(BUNDLED, device=DEVICE, dtype="float32")
