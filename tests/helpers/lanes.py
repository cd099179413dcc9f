"""Lanes for pytest-xdist (`pytest -n 2 --lanes`). One worker runs the first half of the browser tests, in the order
a single process runs them; the other runs every test without a browser first, then the second half of the browser
tests with its own app server and Chromium. A browser test keeps a 2-core machine only about two thirds busy (it
waits for the page and the model by turns): the tests without a browser fill the rest at first, and the second
half of the browser tests once they are done. The halves are chosen by their measured times (docs/testing.md), so
both workers end at about the same time."""

from xdist.scheduler import LoadScopeScheduling

BROWSER = "tests/e2e/"
FIRST, SECOND = "browser tests, first half", "browser tests, second half"
# the second half: each lesson's own "Try this" files that start nothing but the session's app server (the ZeroGPU
# tests, which start a server of their own, stay in the first). A list of files chosen by their measured times, not
# of tabs: a new lesson's files run in the first half until they are measured and the halves weighed again
SECOND_HALF = {
    f"{BROWSER}{name}_e2e.py"
    for name in (
        "test_try_quantization",
        "test_try_constrained",
        "test_try_speculative",
        "test_try_beams",
        "test_try_nondeterminism",
        "test_try_timing",
        "test_try_serving",
        "test_speculative_lens",
        "test_step_lens",
        "test_try_sandbox",
    )
}


class Lanes(LoadScopeScheduling):
    """xdist's scope scheduling, where a worker takes a whole scope and is given another only once it has two tests
    left: each half of the browser tests is one scope, every other test file its own. A worker's first scope is the
    first half, unless another worker has it; the second half is given out last. (xdist's `--dist loadgroup` would
    say some of this with marks, but under pytest 9.2 its groups are not read: see docs/testing.md.)"""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        if path.startswith(BROWSER):
            return SECOND if path in SECOND_HALF else FIRST
        return path

    def _assign_work_unit(self, node) -> None:
        if FIRST in self.workqueue and not self.assigned_work.get(node):
            self.workqueue.move_to_end(FIRST, last=False)
        elif SECOND in self.workqueue and len(self.workqueue) > 1:
            self.workqueue.move_to_end(SECOND)
        super()._assign_work_unit(node)
