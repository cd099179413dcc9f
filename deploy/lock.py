"""What a Space installs, pinned: requirements.txt written from requirements.in and the packages installed here.

requirements.in is the list a person edits: the packages the app imports, each with why and the range it works in.
A Space reads one file, requirements.txt, and installs it alone (it cannot follow `-r` or `-c` to another file), so
requirements.txt is the lock: every package those lines need, transitive ones included, each pinned to the version
this environment has installed, the one the tests ran. `make lock` writes it:

    .venv/bin/python deploy/lock.py          # (re)writes requirements.txt
    .venv/bin/python deploy/lock.py --check  # exits 1, naming each package, when the lock and this venv disagree

The packages are found the way pip would install them here: each line of requirements.in, then what each installed
package declares it requires (its extras followed, its environment markers evaluated on this Python and platform).
Versions are written without a local label (torch's "+cpu"): `torch==2.13.0` installs the wheel on this machine's
disk here and PyPI's wheel on a Space, whose own pins (CUDA libraries) come from torch's metadata, not from this file.
"""

import argparse
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "requirements.in"
LOCK = ROOT / "requirements.txt"
HEADER = """\
# What a Space installs, and `make run` too: every package requirements.in needs, transitive ones included, pinned to
# the versions the tests ran. Written by `make lock` (deploy/lock.py) from requirements.in; edit that file, not this.
"""


def direct(path: Path = SOURCE) -> list[Requirement]:
    """The requirements a person wrote (comments and blank lines left out)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [Requirement(line) for line in lines if line]


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        raise SystemExit(
            f"{name} is required (requirements.in) but not installed: make setup, then make lock"
        ) from None


def resolve(requirements: list[Requirement]) -> dict[str, tuple[str, set[str]]]:
    """Every package `requirements` need in this environment: canonical name -> (installed version, what needs it)."""
    found: dict[str, tuple[str, set[str]]] = {}
    extras_seen: dict[str, set[str]] = {}
    queue = [(req, "requirements.in", {""}) for req in requirements]
    while queue:
        req, parent, parent_extras = queue.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in parent_extras):
            continue  # for another Python, platform or extra
        name = canonicalize_name(req.name)
        installed = _version(req.name)
        if not req.specifier.contains(installed, prereleases=True):
            raise SystemExit(
                f"{req.name} {installed} is installed, but {parent} asks for {req}: install a version it allows"
            )
        found.setdefault(name, (installed, set()))[1].add(parent)
        extras = {""} | set(req.extras)
        if extras <= extras_seen.get(name, set()):
            continue
        extras_seen.setdefault(name, set()).update(extras)
        queue += [(Requirement(line), name, extras) for line in metadata.requires(req.name) or []]
    return found


def pins(found: dict[str, tuple[str, set[str]]]) -> dict[str, str]:
    """name -> the version a Space installs (without a local label)."""
    return {name: Version(version).public for name, (version, _) in found.items()}


def render(found: dict[str, tuple[str, set[str]]]) -> str:
    lines = [HEADER]
    for name in sorted(found):
        version, parents = found[name]
        via = ", ".join(sorted(parents, key=lambda p: (p != "requirements.in", p)))
        lines.append(f"{name}=={Version(version).public}  # via {via}")
    return "\n".join(lines) + "\n"


def read(path: Path = LOCK) -> dict[str, str]:
    """The lock's pins: name -> version."""
    return {canonicalize_name(req.name): str(next(iter(req.specifier)).version) for req in direct(path)}


def drift(locked: dict[str, str], wanted: dict[str, str]) -> list[str]:
    """Each package on which the lock and this environment disagree, in words."""
    out = []
    for name in sorted(locked.keys() | wanted.keys()):
        if name not in locked:
            out.append(f"{name} {wanted[name]} is needed here but not in the lock")
        elif name not in wanted:
            out.append(f"{name} {locked[name]} is in the lock but nothing in requirements.in needs it")
        elif locked[name] != wanted[name]:
            out.append(f"{name}: the lock pins {locked[name]}, this environment has {wanted[name]}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the lock with this environment, write nothing")
    args = parser.parse_args()
    found = resolve(direct())
    if args.check:
        problems = drift(read(), pins(found))
        print("\n".join(problems) or f"requirements.txt agrees with this environment ({len(found)} packages)")
        return 1 if problems else 0
    LOCK.write_text(render(found))
    print(f"wrote {LOCK.name}: {len(found)} packages pinned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
