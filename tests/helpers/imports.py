"""What a module imports, read from its syntax tree (an import inside a function counts too)."""

import ast
from pathlib import Path

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
    """Every Python file under `folders` (relative to the repository root)."""
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))
