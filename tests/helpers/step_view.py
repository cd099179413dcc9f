"""The step tab's answer read back as the page would show it: its patched elements' pieces by element id
(ui/step/view.py: the stage's chart, loop, chips, stop line, force row and orders; below, the penalties, the time
chart and the numbers)."""

import re

from ui.sessions import STORE


def sent(run_id) -> dict[str, str]:
    """Every piece as the session's page now shows it (what its elements were last sent), by element id."""
    view = STORE.get(run_id).view
    return {key: part.html for patcher in (view.stage, view.below) for key, part in patcher.sent.pieces}


def changed(value: dict, key: str) -> str | None:
    """What a patched element's `value` sets piece `key` to: its part of a whole view, or the op that replaces it;
    None when the value leaves it as it was (or changes it by parts: see `ops`)."""
    if "html" in value:
        found = re.search(rf'<div id="{key}">(.*?)</div>(?=<div id="step-|$)', value["html"], re.S)
        return found.group(1) if found else None
    return next((op[2] for op in value["ops"] if op[0] == "html" and op[1] == f"#{key}"), None)


def ops(value: dict, key: str) -> list[list]:
    """The changes a patched element's `value` makes inside piece `key`."""
    return [op for op in value.get("ops", []) if op[1] == f"#{key}" or op[1].startswith(f"#{key} ")]
