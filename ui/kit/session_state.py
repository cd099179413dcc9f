"""A session's gradio state, made without copying every block's config up front.

gradio 6 makes a session's state (gradio.state_holder.SessionState) at the session's first event, inside the queue's
`push` on the server's one event loop, and there copies the config of every block of the app (`config_values`: each
block's `get_config()`, deep-copied): this app's 485 blocks took 40-60 ms each time (2-vCPU AMD EPYC), during which no
other request moved. A class's first Prefills paid it thirty times in a row, each student's behind the others'.

The copies serve gradio's deep links alone (`components`, for a DeepLinkButton, reads them all). gradio keeps them
current at every event: each input's and output's value is written into its copy, the copy made first if missing, and
a State's or a replaced component's copy is made again at each write. A session's first Prefill made 17 copies that
way (4 ms of the 10 its event cost), and every Step one more, for its State. `LazySessionState` keeps the blocks and
values gradio gives it and makes every copy when `components` is read: the configs gradio's own would hold then.
`use()` makes gradio's state holder make these.
"""

import datetime
import os
from copy import copy

from gradio import state_holder
from gradio.components import State


class LazySessionState(state_holder.SessionState):
    """gradio's SessionState, its `config_values` made when they are read."""

    def __init__(self, blocks):  # gradio 6.31's __init__, without the copies (a test compares the two)
        self.blocks_config = copy(blocks.default_config)
        self.config_values = {}
        self.state_data = {}
        self._state_ttl = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 1 if os.getenv("GRADIO_IS_E2E_TEST", None) else 3600
        self._app_blocks = blocks.blocks  # the blocks gradio copies the config of
        self._stale: set[int] = set()  # blocks written since their copy was made: made again when read
        self._values: dict = {}  # the last value an event gave each block, put into its copy when read

    def __setitem__(self, key: int, value):
        block = self.blocks_config.blocks.get(key)
        if isinstance(block, State):
            self._state_ttl[key] = (block.time_to_live, datetime.datetime.now())
            self.state_data[key] = value
        else:
            self.blocks_config.blocks[key] = value
        if block:
            self._written(key)

    def _update_config(self, key: int):
        if self[key] is None:
            return
        if isinstance(self.blocks_config.blocks.get(key), State):  # gradio copies the state's value there: as it does
            return super()._update_config(key)
        self._written(key)

    def _update_value_in_config(self, key: int, value):
        self._values[key] = value

    def _written(self, key: int) -> None:
        """The block at `key` was written: its copy is made from it again, and a value given before is dropped."""
        self._stale.add(key)
        self._values.pop(key, None)

    @property
    def components(self):
        made = {}
        for key, block in self.blocks_config.blocks.items():
            if key in self._app_blocks or key in self.config_values or key in self._stale:
                kept = self.config_values.get(key)
                made[key] = kept if kept is not None and key not in self._stale else self._config(key, block)
        for key, value in self._values.items():
            if key not in made:  # a value for a block gradio had not copied: its copy made as gradio makes it
                made[key] = self._config(key, self.blocks_config.blocks[key])
            if "props" in made[key]:
                made[key]["props"]["value"] = value
        self.config_values, self._stale, self._values = made, set(), {}
        yield from super().components

    def _config(self, key: int, block) -> dict:
        return self.blocks_config.config_for_block(key, [], block)


def use() -> None:
    """Every session state gradio makes from now on is a LazySessionState."""
    state_holder.SessionState = LazySessionState
