"""The beam tab's handlers on the tiny model: a search lives on the server, steps, ends, and is compared with greedy."""

import re

import pytest

from decoding.beams.search import beam_search
from decoding.prompts import encode_prompt
from ui.beams import handlers as h
from ui.context import AppConfig

CONFIG = AppConfig("tiny-random", "cpu")
TEXT = "Tell me a story."
KNOBS = {"num_beams": 3, "length_penalty": 1.0, "early_stopping": "false", "max_new_tokens": 5}


def test_settings_from_the_browser_are_checked_with_the_allowed_range():
    assert h.settings(4.0, "0.5", "never", 20.0) == (4, 0.5, "never", 20)
    with pytest.raises(ValueError, match=r"number of beams must be a whole number in \[1, 8\], got 9"):
        h.settings(9, 1.0, "false", 20)
    with pytest.raises(ValueError, match=r"length penalty must be a number between -2 and 3 .*, got an empty box"):
        h.settings(4, None, "false", 20)
    with pytest.raises(ValueError, match=r"length penalty must be a number between -2 and 3 .*, got 5"):
        h.settings(4, 5, "false", 20)


def test_steps_grow_the_tree_then_the_end_compares_with_greedy(tiny):
    first = h.step(CONFIG, None, TEXT, h.CHAT, KNOBS)
    sid = first.sid
    assert sid and "Step 1" in first.status and first.compare_md == ""
    second = h.step(CONFIG, sid, TEXT, h.CHAT, KNOBS)
    assert second.sid == sid and "Step 2" in second.status
    end = h.run_to_end(CONFIG, sid, TEXT, h.CHAT, KNOBS, progress=lambda *a, **k: None)
    assert "Stopped" in end.status and "greedy" in end.compare_md
    search = h.SEARCHES.get(sid)
    ids = encode_prompt(tiny.tokenizer, TEXT, chat=True).ids
    assert search.result.token_ids == beam_search(tiny, ids, 3, 1.0, False, 5).token_ids
    h.reset(sid)
    assert h.SEARCHES.get(sid) is None


def test_changing_a_setting_starts_a_new_search():
    sid = h.step(CONFIG, None, TEXT, h.CHAT, KNOBS).sid
    first = h.SEARCHES.get(sid)
    h.step(CONFIG, sid, TEXT, h.CHAT, {**KNOBS, "num_beams": 2})
    assert h.SEARCHES.get(sid) is not first and len(h.SEARCHES.get(sid).steps) == 1
    h.reset(sid)


def test_stop_during_run_to_end_ends_it_between_two_steps_and_says_how_soon():
    def pressed(*args, **kwargs):  # Stop pressed as the bar first says "beam step 1": step 1 is taken, no more
        h.STOPS.cancel(None)

    halted = h.run_to_end(CONFIG, None, TEXT, h.CHAT, {**KNOBS, "max_new_tokens": 20}, progress=pressed)
    search = h.SEARCHES.get(halted.sid)
    assert len(search.steps) == 1 and search.result is None
    took = float(re.search(r"\*\*Stopped by you\*\*, ([\d.]+) s after you pressed Stop", halted.status).group(1))
    assert 0 <= took < 5 and "the search can go on" in halted.status
    end = h.run_to_end(CONFIG, halted.sid, TEXT, h.CHAT, {**KNOBS, "max_new_tokens": 20}, progress=lambda *a, **k: 0)
    assert "Stopped by you" not in end.status and "greedy" in end.compare_md  # a Run to end after it goes on
    h.reset(halted.sid)
