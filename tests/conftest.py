"""Shared fixtures: the tiny random model (no downloads) and the bundled model (loaded once)."""

import pytest

from decoding.models import BUNDLED, TINY, load_model


@pytest.fixture(scope="session")
def tiny():
    return load_model(TINY, device="cpu")


@pytest.fixture(scope="session")
def bundled():
    return load_model(BUNDLED, device="cpu")
