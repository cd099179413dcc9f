"""The import rules between the layers, read from every module's imports (its syntax tree, so an import inside a
function counts too): the engine knows no page, the charts know no model, and nothing the app or a benchmark runs
imports a test module."""

import ast

import pytest

from tests.helpers.imports import ROOT, imported, modules


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
