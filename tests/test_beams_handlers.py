"""The beam tab's handlers on the tiny model: a search lives on the server, steps, ends, and is compared with greedy."""

import pytest

from decoding.beams.search import beam_search
from decoding.prompts import encode_prompt
from ui import beams_handlers as h
from ui.context import AppConfig

CONFIG = AppConfig("tiny-random", "cpu")
KNOBS = ("Tell me a story.", h.CHAT, 3, 1.0, "false", 5)


def test_settings_from_the_browser_are_checked_with_the_allowed_range():
    assert h.settings(4.0, "0.5", "never", 20.0) == (4, 0.5, "never", 20)
    with pytest.raises(ValueError, match=r"number of beams must be a whole number in \[1, 8\], got 9"):
        h.settings(9, 1.0, "false", 20)
    with pytest.raises(ValueError, match=r"length penalty must be a number between -2 and 3 .*, got None"):
        h.settings(4, None, "false", 20)
    with pytest.raises(ValueError, match=r"length penalty must be a number between -2 and 3 .*, got 5"):
        h.settings(4, 5, "false", 20)


def test_steps_grow_the_tree_then_the_end_compares_with_greedy(tiny):
    sid, tree, table, status, _, compare_md = h.step(CONFIG, None, *KNOBS)
    assert sid and "Step 1" in status and compare_md == ""
    sid2, _, _, status, _, _ = h.step(CONFIG, sid, *KNOBS)
    assert sid2 == sid and "Step 2" in status
    *_, status, _, compare_md = h.run_to_end(CONFIG, sid, *KNOBS, progress=lambda *a, **k: None)
    assert "Stopped" in status and "greedy" in compare_md
    search = h.SEARCHES.get(sid)
    ids = encode_prompt(tiny.tokenizer, KNOBS[0], chat=True).ids
    assert search.result.token_ids == beam_search(tiny, ids, 3, 1.0, False, 5).token_ids
    h.reset(sid)
    assert h.SEARCHES.get(sid) is None


def test_changing_a_setting_starts_a_new_search():
    sid, *_ = h.step(CONFIG, None, *KNOBS)
    first = h.SEARCHES.get(sid)
    h.step(CONFIG, sid, *KNOBS[:2], 2, *KNOBS[3:])
    assert h.SEARCHES.get(sid) is not first and len(h.SEARCHES.get(sid).steps) == 1
    h.reset(sid)
