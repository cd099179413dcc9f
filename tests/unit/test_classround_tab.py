"""The class round's tab on the tiny model: it is a lesson added by its own packages alone; a student's page cannot
advance, change or end the round and is told why; a closed page is counted out; an idle round ends; a round lives in
the server's one store under its byte cap; a refresh with nothing new sends nothing; a teacher's new round takes the
class along; a link joins its round. Each rule holds with the rounds in this process and in Redis (a lecture hall's
replicas: `rounds.serve` with a Redis address)."""

import html
import re
import subprocess

import gradio as gr
import pytest

from decoding.classround.records import MODEL
from tests.helpers.redis_server import HOMES, emptied
from tests.helpers.step_knobs import CONFIG
from ui.classround import handlers as h
from ui.classround import rounds
from ui.classround.presets import PRESETS, link_setup
from ui.classround.seats import SEATS, student_of
from ui.events import teach
from ui.launch import ROOT
from ui.sessions import STORE, TTL_S
from ui.tabs import specs

SETUP = ("The best pet is a", False, "Sample together", 1.0, 0, 1.0, 0.0)
# where the lesson may be named: its own packages, its tests and docs, Start here's plans (data) and the load bench
OWN = ("ui/classround/", "decoding/classround/", "visuals/classround/", "tests/", "docs/", "artifacts/")
ALSO = ("ui/start/plans.py", "bench/classroom_load.py", "bench/class_round.py", "README.md")


@pytest.fixture(params=HOMES, autouse=True)
def home(request):
    """The tab's rounds in this process, then in a real Redis (an empty database)."""
    url = emptied(request.getfixturevalue("redis_url")) if request.param == "redis" else ""
    rounds.serve(CONFIG, url)
    yield request.param
    rounds.serve(CONFIG, "")


def started(session="teacher-page"):
    out = h.start(CONFIG, session, None, *SETUP)
    return out.teacher, rounds.find(out.teacher["code"])


def test_adding_the_lesson_touched_only_its_own_packages_start_heres_plans_and_the_bench():
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    naming = [
        f
        for f in files
        if not f.startswith(OWN) and f not in ALSO and "classround" in (ROOT / f).read_text(errors="ignore")
    ]
    assert naming == []  # app.py, ui/tabs.py and the other tabs know nothing of it: specs() finds it
    assert "classround" in [spec.id for spec in specs()]


def test_the_lesson_sits_after_the_sampler_sandbox_in_the_teaching_order():
    ids = [spec.id for spec in specs()]
    assert ids.index("classround") == ids.index("sandbox") + 1


def test_a_student_page_cannot_advance_change_reveal_draw_for_or_end_the_round_and_is_told_why(tiny):
    teacher, r = started()
    h.join("student-page", r.code)
    message = gr.HTML()
    for name, call in (
        ("advance", lambda key: h.advance("student-page", key, MODEL)),
        ("change", lambda key: h.set_settings("student-page", key, 0.5, 0, 1.0, 0.0)),
        ("draw for", lambda key: h.draw_each("student-page", key)),
        ("end", lambda key: h.end("student-page", key)),
    ):
        for key in (None, {"code": r.code, "key": "guessed"}, {"code": "XXXX", "key": teacher["key"]}):
            said = teach(lambda key=key, call=call: call(key), message)()
            assert f"only the teacher who started round {r.code} can {name} it" in said[message]
    assert r.record().step == 0 and r.record().settings["temperature"] == 1.0 and r.ended is None
    h.advance("teacher-page", teacher, MODEL)  # the page that started it can
    assert r.record().step == 1


def test_a_page_that_closes_is_counted_out_with_its_draws(tiny):
    _, r = started()
    for page in ("ada-page", "bob-page"):
        h.join(page, r.code)
    h.draw("bob-page")
    h.leave("bob-page")
    assert (r.record().present, r.record().left, r.record().draw.total) == (1, 1, 0)
    assert SEATS.get("bob-page") is None


def test_a_student_keeps_their_id_and_seed_across_rejoins_and_the_round_records_the_seed(tiny):
    _, r = started()
    h.join("ada-page", r.code)
    h.join("ada-page", r.code.lower())  # the code as typed
    student, seed = student_of("ada-page")
    assert r.record().present == 1 and r.seat(student).seed == seed


def test_a_round_no_one_touched_for_the_time_to_live_ends_and_its_students_are_told(tiny):
    _, r = started()
    h.join("ada-page", r.code)
    r.last_active -= TTL_S + 1
    with pytest.raises(ValueError, match=f"round {r.code} has ended \\(no one did anything in it for 30 minutes\\)"):
        h.draw("ada-page")
    assert r.held_tokens() == []  # its caches freed


def test_a_round_is_in_the_servers_one_store_and_its_greedy_runs_count_under_the_byte_cap(tiny):
    teacher, r = started()
    before = STORE.kv_bytes()
    h.set_kind("teacher-page", teacher, "Greedy together")
    for page in ("ada-page", "bob-page"):
        h.join(page, r.code)
        h.greedy(page, steps=1)
    assert STORE.kv_bytes() > before
    assert rounds.round_bytes(r) == sum(rounds.kv_bytes_at(r.lm, n) for n in r.held_tokens())  # each, at its longest
    assert len(r.held_tokens()) == 3


def test_a_refresh_sends_the_view_once_and_then_nothing_until_something_changes(tiny):
    _, r = started()
    h.join("ada-page", r.code)
    first = h.refresh("teacher-page").view
    assert first["ops"]  # the student who joined
    assert isinstance(h.refresh("teacher-page").view, type(gr.skip()))
    h.draw("ada-page")
    assert ["attr", ".classround-view", "data-total", "1"] in h.refresh("teacher-page").view["ops"]


def test_a_teachers_new_round_ends_the_last_one_and_its_students_follow_on_their_next_refresh(tiny):
    teacher, old = started()
    h.join("ada-page", old.code)
    out = h.start(CONFIG, "teacher-page", teacher, *SETUP)
    assert old.ended and old.moved_to == out.teacher["code"]
    h.refresh("ada-page")
    new = rounds.find(out.teacher["code"])
    assert SEATS.get("ada-page").code == new.code and new.record().present == 1


def test_a_link_sets_the_next_rounds_controls_and_names_what_was_wrong_in_it():
    link = link_setup({"tab": "classround", "preset": "capital-of-france", "kind": "guess", "top_p": "0.9"})
    assert (link.preset, link.kind, link.knobs, link.round, link.message) == (
        "Capital of France: one favourite",
        "guess",
        {"top_p": 0.9},
        None,
        "",
    )
    wrong = link_setup({"tab": "classround", "kind": "race", "temperature": "9", "round": "k7qf"})
    assert wrong.round == "K7QF" and wrong.kind is None and "temperature" not in wrong.knobs
    said = html.unescape(wrong.message)
    assert "kind 'race' is not one of guess, sample, greedy" in said and "Temperature must be" in said
    assert link_setup({"tab": "step", "round": "K7QF"}).round is None


def test_a_page_opened_with_a_rounds_link_joins_it_and_a_reloaded_teachers_page_shows_its_round_again(tiny):
    teacher, r = started()
    loaded = h.load("phone-page", None, {"tab": "classround", "round": r.code})
    assert loaded.code == r.code and loaded.view["html"].count('data-role="student"') == 1
    again = h.load("teacher-reloaded", teacher, {"tab": "classround", "projector": "1"})
    assert again.view["html"].count('data-role="teacher"') == 1 and again.prompt == PRESETS[next(iter(PRESETS))].prompt


def test_a_page_asks_a_plain_route_whose_numbers_change_with_what_the_projector_and_every_student_see(tiny):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from ui.classround.shown import ROUTE, routes

    teacher, r = started()
    h.join("ada-page", r.code)
    ask = TestClient(Starlette(routes=routes(CONFIG)))

    def shown(code=r.code, what="shown") -> int:
        return ask.get(ROUTE, params={"code": code}).json()[what]

    before, version = shown(), shown(what="version")
    h.draw("ada-page")  # a student's own draw: nobody else's page changes, the projector's does
    assert shown() == before and shown(what="version") == version + 1
    h.set_settings("teacher-page", teacher, 0.5, 0, 1.0, 0.0)
    assert shown() == before + 1
    h.advance("teacher-page", teacher, MODEL)
    assert shown() == before + 2
    assert shown("ZZZZ") == -1 and shown("not a code") == -1
    # the page that asked and saw a new number asks for its view: its `data-shown` is the new number
    assert ["attr", ".classround-view", "data-shown", str(before + 2)] in h.refresh("ada-page").view["ops"]


def test_a_students_page_is_heard_by_its_seats_ping_and_a_page_that_goes_quiet_is_counted_out(tiny):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from decoding.classround.round import GONE_S
    from ui.classround.shown import ROUTE, routes

    _, r = started()
    now = [0.0]
    r.clock = lambda: now[0]
    ask = TestClient(Starlette(routes=routes(CONFIG)))
    for page in ("ada-page", "bot-page"):
        h.join(page, r.code)
    ping = re.search(r'data-ping="([^"]+)"', h.resend("ada-page").view["html"])[1]
    assert ping == SEATS.get("ada-page").ping and ping not in h.resend("bot-page").view["html"]
    version = r.version
    for _ in range(3):
        now[0] += GONE_S / 2
        ask.get(ROUTE, params={"code": r.code, "seat": ping})  # ada's page asks; the bot's asks nothing
    assert (r.record().present, r.record().left) == (1, 1) and r.version > version  # the projector's view changes
    ask.get(ROUTE, params={"code": r.code, "seat": "a forged ping"})  # hears no one
    assert r.record().present == 1


def test_a_late_student_is_told_the_round_is_locked_and_a_removed_page_is_told_so(tiny):
    teacher, r = started()
    h.join("ada-page", r.code)
    h.lock("teacher-page", teacher)
    with pytest.raises(ValueError, match=f"round {r.code} is locked: .* ask the teacher to unlock it"):
        h.join("late-page", r.code)
    student, _ = student_of("ada-page")
    with pytest.raises(ValueError, match="only the teacher who started round .* can remove a seat from it"):
        h.remove("ada-page", None, student)
    h.remove("teacher-page", teacher, student)
    assert "the teacher removed this page from round" in html.unescape(str(h.refresh("ada-page").view))


def test_a_tap_on_a_choice_sent_after_the_teacher_moved_on_is_refused_not_counted_for_the_next_step(tiny):
    teacher, r = started()
    h.set_kind("teacher-page", teacher, "Guess, then reveal")
    h.join("ada-page", r.code)
    token = r.seat(student_of("ada-page")[0]).choices[0].id
    h.pick("ada-page", f"0:{token}")
    h.advance("teacher-page", teacher, MODEL)
    with pytest.raises(ValueError, match="your guess was for step 1, and the teacher has moved on to step 2"):
        h.pick("ada-page", f"0:{token}")
    assert r.record().guesses.guessed == 0


def test_a_plan_opened_while_the_teachers_round_runs_sets_up_the_next_round_and_does_not_show_the_old(tiny):
    teacher, r = started()
    loaded = h.load("teacher-next-plan", teacher, {"tab": "classround", "preset": "capital-of-france"})
    assert loaded.prompt == "The capital of France is" and f"Your round {r.code} still runs" in loaded.view["html"]
    assert 'data-role="teacher"' not in loaded.view["html"] and SEATS.get("teacher-next-plan") is None


def test_the_rounds_numbers_answer_the_teachers_key_alone(tiny):
    teacher, r = started()
    for key in (None, "", "guessed", r.code):
        with pytest.raises(ValueError, match="can read the numbers of it"):
            h.numbers(r.code, key)
    assert h.numbers(r.code.lower(), teacher["key"])["code"] == r.code


def test_a_teachers_page_a_server_no_longer_seats_takes_its_round_back_with_its_key(tiny):
    teacher, r = started()
    SEATS.leave("teacher-page")  # as a hall's other server sees the page its own server served
    h.advance("teacher-page", teacher, MODEL)
    assert r.record().step == 1 and SEATS.get("teacher-page").student is None  # its projector again
    SEATS.leave("teacher-page")
    assert 'data-role="teacher"' in h.refresh("teacher-page", teacher).view["html"]
    SEATS.leave("teacher-page")
    with pytest.raises(ValueError, match="no class round in this session yet|no longer on the server"):
        h.advance("teacher-page", {"code": r.code, "key": "guessed"}, MODEL)
