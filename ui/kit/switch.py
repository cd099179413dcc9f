"""The kit's one switch: `DECODING_LAB_PLAIN=1` runs the app on plain gradio, with none of the kit installed."""

import os

PLAIN = "DECODING_LAB_PLAIN"


def plain() -> bool:
    """Whether this process runs on plain gradio (read at each call, so a test can set it)."""
    return os.environ.get(PLAIN) == "1"
