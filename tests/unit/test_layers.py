"""The import rules between the layers, read from every module's imports (its syntax tree, so an import inside a
function counts too): the engine knows no page, the charts know no model, and nothing the app or a benchmark runs
imports a test module."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imported(path: Path) -> set[str]:
    """The top-level package of every module `path` imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def modules(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize(
    ("folders", "forbidden"),
    [
        (("decoding",), {"gradio", "plotly", "visuals", "ui", "tests"}),  # the engine: tensors in, records out
        (("visuals",), {"torch", "transformers", "gradio", "ui", "tests"}),  # the charts: plain numbers in, figures out
        (("ui", "bench"), {"tests"}),  # what the app and the benchmarks run is in the project, not in a test file
    ],
)
def test_each_layer_imports_only_what_it_may(folders, forbidden):
    found = {str(p.relative_to(ROOT)): sorted(imported(p) & forbidden) for p in modules(*folders)}
    assert {path: names for path, names in found.items() if names} == {}
    assert len(found) > 3  # the folders were found and read


def test_no_test_module_imports_another():
    """What tests share (fixtures' data, page readers, a reference run) lives in tests/helpers/."""
    found = {}
    for path in modules("tests"):
        tree = ast.parse(path.read_text(), str(path))
        names = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        tests = [n for n in names if n.startswith("tests.") and n.split(".")[-1].startswith("test_")]
        if tests:
            found[str(path.relative_to(ROOT))] = tests
    assert found == {}
