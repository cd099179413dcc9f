"""Two lanes for pytest-xdist (`pytest -n 2 --lanes`): every browser test in one worker, in the order a single
process runs them, with the session's one app server and one Chromium; every other test file given out to the
other worker as it asks. A browser test keeps a 2-core machine only about two thirds busy (it waits for the page
and the model by turns), and the tests without a browser fill the rest."""

from xdist.scheduler import LoadScopeScheduling

BROWSER = "tests/e2e/"


class Lanes(LoadScopeScheduling):
    """xdist's scope scheduling with the browser tests as one scope: a worker takes a whole scope and is given
    another only once it has two tests left, so the worker that takes the browser tests runs nothing else meanwhile.
    (xdist's `--dist loadgroup` would say the same with marks, but under pytest 9.2 its groups are not read: see
    docs/testing.md.)"""

    def _split_scope(self, nodeid: str) -> str:
        return BROWSER if nodeid.startswith(BROWSER) else nodeid.split("::", 1)[0]
