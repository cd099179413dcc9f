"""A session's gradio state, made without copying every block's config up front.

gradio 6 makes a session's state (gradio.state_holder.SessionState) at the session's first event, inside the queue's
`push` on the server's one event loop, and there copies the config of every block of the app (`config_values`: each
block's `get_config()`, deep-copied): this app's 485 blocks took 40-60 ms each time (2-vCPU AMD EPYC), during which no
other request moved. A class's first Prefills paid it thirty times in a row, each student's behind the others'.

The copies serve two things: a component whose value an event changes has its copy updated (gradio makes that copy
when it is missing), and gradio's deep links (`components`, for a DeepLinkButton) read them all. `LazySessionState`
starts with none and makes the rest when `components` is read, so a session pays for a copy only when one is used.
`use()` makes gradio's state holder make these.
"""

import os
from copy import copy

from gradio import state_holder


class LazySessionState(state_holder.SessionState):
    """gradio's SessionState, its `config_values` made as they are needed."""

    def __init__(self, blocks):  # gradio 6.31's __init__, without the copies (a test compares the two)
        self.blocks_config = copy(blocks.default_config)
        self.config_values = {}
        self.state_data = {}
        self._state_ttl = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 1 if os.getenv("GRADIO_IS_E2E_TEST", None) else 3600
        self._app_blocks = blocks.blocks  # the blocks gradio copies the config of

    @property
    def components(self):
        for key, block in self.blocks_config.blocks.items():
            if key in self._app_blocks and key not in self.config_values:
                self.config_values[key] = self.blocks_config.config_for_block(key, [], block)
        yield from super().components


def use() -> None:
    """Every session state gradio makes from now on is a LazySessionState."""
    state_holder.SessionState = LazySessionState
