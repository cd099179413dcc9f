"""The Space's front matter (README.md) builds what the tests ran: gradio's sdk_version is the version
requirements.txt pins and this environment runs, and python_version is this environment's (and pyproject allows it)."""

import re
import sys
from pathlib import Path

import gradio as gr

ROOT = Path(__file__).resolve().parents[2]


def front_matter() -> dict[str, str]:
    text = (ROOT / "README.md").read_text()
    block = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert block, "README.md opens with a Space's front matter between --- lines"
    pairs = (line.split(":", 1) for line in block.group(1).splitlines() if ":" in line)
    return {key.strip(): value.strip().strip('"') for key, value in pairs}


def test_the_front_matter_names_the_gradio_that_requirements_pin_and_the_tests_run():
    meta = front_matter()
    pinned = re.search(r"^gradio==([\w.]+)", (ROOT / "requirements.txt").read_text(), re.M)
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py"
    assert pinned and meta["sdk_version"] == pinned.group(1) == gr.__version__


def test_the_front_matter_python_is_the_one_the_tests_run_and_pyproject_allows():
    meta = front_matter()
    lowest = re.search(r'requires-python = ">=(\d+)\.(\d+)"', (ROOT / "pyproject.toml").read_text())
    major, minor = (int(n) for n in meta["python_version"].split("."))
    assert (major, minor) >= (int(lowest.group(1)), int(lowest.group(2)))
    assert (major, minor) == sys.version_info[:2]
