"""What a Space installs is pinned (requirements.txt, written by `make lock` from requirements.in): every package the
app imports and everything those need, each at the version installed here, the one the tests run. An upgrade that
drifts from the lock fails here, naming the package."""

import sys
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from deploy import lock
from tests.helpers.imports import imported, modules

# imported by the app, but not from the lock: what the Space itself brings
NOT_LOCKED = {"spaces": "a ZeroGPU Space installs it; ui/gpu.py imports it only where it is installed"}
OWN = {"app", "decoding", "visuals", "ui"}


def test_the_lock_pins_what_requirements_in_needs_at_the_versions_installed_here():
    problems = lock.drift(lock.read(), lock.pins(lock.resolve(lock.direct())))
    assert problems == [], "requirements.txt and this environment disagree (make lock): " + "; ".join(problems)


def test_every_line_of_the_lock_is_one_exact_version():
    for req in lock.direct(lock.LOCK):
        assert [spec.operator for spec in req.specifier] == ["=="], f"{req} in requirements.txt is not one version"
        assert not req.marker and not req.extras, f"{req}: the lock is for this Python and platform, extras resolved"


def test_every_package_the_app_imports_is_pinned_by_the_lock():
    locked = lock.read()
    owners = metadata.packages_distributions()
    found = set().union(*(imported(p) for p in modules("decoding", "visuals", "ui") + [lock.ROOT / "app.py"]))
    third_party = sorted(name for name in found - OWN if name not in sys.stdlib_module_names)
    assert {"torch", "transformers", "gradio", "fastapi", "starlette"} <= set(third_party)  # the reading worked
    missing = {}
    for name in third_party:
        if name in NOT_LOCKED:
            continue
        dists = [canonicalize_name(d) for d in owners.get(name, [])]
        if not any(d in locked for d in dists):
            missing[name] = dists or "not installed"
    assert missing == {}, f"imported by the app but not pinned in requirements.txt: {missing}"


def test_the_direct_route_s_framework_and_the_cpu_torch_are_pinned_in_the_list_a_person_edits():
    """ui/kit/direct_route.py reads FastAPI's private router class: a range would let a Space build a FastAPI it was
    never run on. torch stays the CPU wheel on this machine's disk."""
    pinned = {canonicalize_name(r.name): str(r.specifier) for r in lock.direct()}
    assert pinned["fastapi"] == f"=={metadata.version('fastapi')}"
    assert pinned["starlette"] == f"=={metadata.version('starlette')}"
    assert pinned["torch"] == "==2.13.0"


def test_drift_names_each_package_that_moved():
    locked = {"fastapi": "0.165.0", "starlette": "1.10.0", "gone": "1.0"}
    here = {"fastapi": "0.166.0", "starlette": "1.10.0", "new": "2.0"}
    problems = lock.drift(locked, here)
    assert problems == [
        "fastapi: the lock pins 0.165.0, this environment has 0.166.0",
        "gone 1.0 is in the lock but nothing in requirements.in needs it",
        "new 2.0 is needed here but not in the lock",
    ]


def test_resolve_follows_extras_and_markers_as_pip_would_here():
    # gradio's own requirements reach starlette through fastapi; a marker for another platform adds nothing
    found = lock.resolve([Requirement("gradio")])
    assert {"fastapi", "starlette", "gradio-client"} <= found.keys()
    assert "gradio" in found["fastapi"][1]
    assert lock.resolve([Requirement('gradio; sys_platform == "nowhere"')]) == {}
