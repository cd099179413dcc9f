"""One client cannot empty the server for everyone: thirty new sessions, each a Prefill of a long prompt with many max
new tokens, take only the room that is free. Another student's run and a live class round are untouched, and the
flooder is told, before any pass is run, how much its run needs, what is free and what to lower."""

import pytest

from decoding.classround.records import MODEL
from tests.helpers.step_knobs import CONFIG, KNOBS, page
from ui import sessions
from ui.classround import handlers as round_handlers
from ui.classround import rounds
from ui.context import RAW, get_model
from ui.step import handlers as h

FLOOD_PROMPT = "the same long question, asked again and again " * 4  # ~190 tokens of the tiny model
FLOOD_MAX_NEW = 300


@pytest.fixture()
def store(tiny, monkeypatch):
    """A server whose KV cap holds a student's run and about four of the flooder's, with its rounds on their own
    budget, as ui.sessions.STORE holds them (the same rules; a smaller cap, for the tiny model)."""
    lm = get_model(CONFIG)
    per_run = sessions.kv_bytes_at(lm, len(lm.tokenizer(FLOOD_PROMPT).input_ids) + FLOOD_MAX_NEW)
    store = sessions.Store(max_kv_bytes=int(4.5 * per_run), share_floor=int(4.5 * per_run))
    kind = rounds.ROUNDS
    monkeypatch.setattr(h, "STORE", store)
    live = store.kind("class round", bytes_of=kind.bytes_of, again=kind.again, smaller=kind.smaller, live=kind.live)
    monkeypatch.setattr(rounds, "ROUNDS", live)
    return store


def test_thirty_sessions_of_long_prefills_leave_a_students_run_and_a_live_round_untouched(tiny, store):
    student = h.prefill(CONFIG, None, CONFIG.model_id, "hello", RAW, 0, 8, "", page(KNOBS)).run_id
    h.step(student, page(KNOBS))
    teacher = round_handlers.start(
        CONFIG, "teacher-page", None, "The best pet is a", False, "Sample together", 1.0, 0, 1.0, 0.0
    ).teacher
    code = teacher["code"]
    round_handlers.join("student-page", code)
    before = rounds.find(code).record()

    refusals = []
    for _ in range(30):  # one client, thirty new sessions
        try:
            h.prefill(CONFIG, None, CONFIG.model_id, FLOOD_PROMPT, RAW, 0, FLOOD_MAX_NEW, "", page(KNOBS))
        except sessions.Refused as err:  # a ValueError: the page's message line shows it (ui.events.teach)
            refusals.append(str(err))
    assert 20 <= len(refusals) <= 27, "the free room took a few of the flooder's runs, and refused the rest"
    assert store.kv_bytes() <= store.max_kv_bytes
    said = refusals[-1]
    assert "this run needs" in said and "MiB of KV cache at its longest" in said
    assert f"+ {FLOOD_MAX_NEW} max new tokens" in said and "sessions in use hold" in said
    assert "lower Max new tokens to" in said or "try again in a few minutes" in said

    # the student's run steps on as before, and the round goes on, counted as it was
    assert h.step(student, page(KNOBS)) and len(h.STORE.get(student).trace.steps) == 2
    r = rounds.find(code)
    assert r.ended is None and r.record().step == before.step
    round_handlers.advance("teacher-page", teacher, MODEL)
    assert rounds.find(code).record().step == before.step + 1


def test_stop_during_a_long_prefill_ends_it_between_chunks_and_nothing_lands(tiny, store, monkeypatch):
    from decoding.watch import Watch
    from ui.context import scheduler_for

    lm = get_model(CONFIG)
    ticks = scheduler_for(lm).log

    def pressed_after_the_first_chunk(request, progress):  # the student presses Stop once the first bite has run
        first = len(ticks.recent())
        return Watch(should_stop=lambda: len(ticks.recent()) > first)

    monkeypatch.setattr(h.PREFILL_STOPS, "watch", pressed_after_the_first_chunk)
    old = h.prefill(CONFIG, None, CONFIG.model_id, "hello", RAW, 0, 8, "", page(KNOBS)).run_id
    long_prompt = "a long prompt, " * 30  # 450 tokens: two bites of the scheduler (chunks of 64 if others stepped)
    stopped = (
        r"Prefill stopped after (64|256) of 4\d\d prompt tokens(, [\d.]+ s after you pressed Stop)?: "
        "nothing of it was kept"
    )
    with pytest.raises(ValueError, match=stopped):
        h.prefill(CONFIG, old, CONFIG.model_id, long_prompt, RAW, 0, 8, "", page(KNOBS))
    assert store.kv_bytes() == 0 and len(store) == 0  # its room given back; the session's old run was replaced
