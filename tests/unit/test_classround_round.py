"""A class round's rules on the tiny model: each draw is the student's own seeded `select` from the round's one
processed distribution, counted once however many draw at once; the round's logits come from one pass per step; new
settings start a new draw; only the teacher's key changes the round; students join and leave; guesses stay hidden
until the reveal; greedy together names the first step where the class's tokens parted. Every rule holds in both of
the round's homes: this process's memory and Redis (a lecture hall's replicas)."""

import threading

import pytest
import torch

from decoding import loop
from decoding.classround.greedy import first_split
from decoding.classround.guesses import typed_token
from decoding.classround.records import CLASS, GREEDY, GUESS, MODEL, PROJECTOR, SAMPLE
from decoding.classround.round import DRAW_BURST, DRAWS_PER_S, GONE_S, NotTeacher, Round
from decoding.classround.state import LocalState
from decoding.pipeline import SamplerSettings, process, select
from decoding.prompts import encode_prompt
from tests.helpers.redis_server import HOMES, emptied

KEY = "the-teacher's-key"
TOP8 = SamplerSettings(top_k=8)  # the tiny model's distribution cut to 8 tokens: every one of them drawn often
HOME = {}  # the round's home for this test: "state" makes an empty one


@pytest.fixture(params=HOMES, autouse=True)
def home(request):
    """Each test once with the round in this process's memory, once in a real Redis (an empty database)."""
    if request.param == "redis":
        from decoding.classround.shared import RedisState, connect

        client = connect(emptied(request.getfixturevalue("redis_url")))
        HOME["state"] = lambda: RedisState(client, "K7QF")
    else:
        HOME["state"] = LocalState
    yield request.param
    HOME.clear()


def opened(lm, settings=TOP8, kind=SAMPLE, **options) -> Round:
    """A round on the tiny model, in this test's home; its draws not limited to a person's rate unless a test says."""
    prompt = encode_prompt(lm.tokenizer, "hello there", chat=False)
    options = {"draws_per_s": 1e9, **options}
    return Round(lm, prompt, settings, kind, code="K7QF", key=KEY, state=HOME["state"](), **options).open()


def test_a_draw_is_select_on_the_rounds_processed_logits_with_the_students_own_seeded_generator(tiny):
    r = opened(tiny)
    r.join("ada", 1234)
    drawn = [r.draw_one("ada")[0].id for _ in range(20)]
    processed = process(r.run.logits, TOP8, r.run.ids, r.run.generated)  # the lab's own pipeline, at the context
    generator = torch.Generator().manual_seed(1234)
    assert drawn == [select(processed.final, TOP8, generator) for _ in range(20)]


def test_two_students_seeds_give_two_sequences_and_a_seed_recorded_gives_its_own_again(tiny):
    r = opened(tiny)
    for name, seed in (("ada", 1), ("bob", 2), ("cy", 1)):
        r.join(name, seed)
    draws = {name: [r.draw_one(name)[0].id for _ in range(12)] for name in ("ada", "bob", "cy")}
    assert draws["ada"] == draws["cy"] != draws["bob"]
    assert r.seat("bob").seed == 2 and r.seat("bob").drawn == tuple(draws["bob"])


def test_every_draw_is_counted_once_when_many_students_draw_at_once(tiny):
    r = opened(tiny)
    students, each = 16, 40
    for k in range(students):
        r.join(f"s{k}", k)
    got: dict[str, list[int]] = {}
    start = threading.Barrier(students)

    def student(k: int) -> None:
        start.wait()
        got[f"s{k}"] = [r.draw_one(f"s{k}")[0].id for _ in range(each)]

    threads = [threading.Thread(target=student, args=(k,)) for k in range(students)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    numbers = r.numbers(KEY)["draw"]
    assert numbers["total"] == students * each
    counted = {}
    for tokens in got.values():
        for t in tokens:
            counted[str(t)] = counted.get(str(t), 0) + 1
    assert numbers["counts"] == counted  # each draw once, none lost, none twice
    assert {name: list(r.draw.by_student[name]) for name in got} == got


def test_the_round_runs_one_forward_pass_per_step_however_many_draw_or_guess(tiny, monkeypatch):
    passes = []
    real = loop.eager_pass
    monkeypatch.setattr(loop, "eager_pass", lambda *a, **k: passes.append(1) or real(*a, **k))
    r = opened(tiny)
    for k in range(5):
        r.join(f"s{k}", k)
    r.draw_each(KEY, 30)
    r.set_kind(KEY, GUESS)
    for k in range(5):
        r.guess(f"s{k}", 65)
    assert len(passes) == 1  # the prompt's
    r.advance(KEY, MODEL)
    r.set_kind(KEY, SAMPLE)
    r.draw_one("s0")
    assert len(passes) == 2  # and one for the token appended


def test_new_settings_start_a_new_draw_and_keep_the_last_one_beside_it(tiny):
    r = opened(tiny)
    r.join("ada", 1)
    for _ in range(5):
        r.draw_one("ada")
    r.set_settings(KEY, SamplerSettings(top_k=8, temperature=0.5))
    record = r.record().draw
    assert record.number == 2 and record.total == 0 and record.settings["temperature"] == 0.5
    assert record.previous[0] == 5 and record.previous[1]["temperature"] == 1.0
    r.set_settings(KEY, SamplerSettings(top_k=8, temperature=0.5))  # the same settings: the same draw
    assert r.record().draw.number == 2


def test_greedy_settings_make_every_draw_the_argmax(tiny):
    r = opened(tiny, SamplerSettings(temperature=0.0))
    r.join("ada", 1)
    top = int(torch.argmax(r.run.logits))
    assert {r.draw_one("ada")[0].id for _ in range(10)} == {top}


def test_advancing_appends_the_models_pick_or_the_classs_most_common_draw(tiny):
    r = opened(tiny, SamplerSettings(temperature=0.0))
    r.join("ada", 1)
    top = int(torch.argmax(r.run.logits))
    assert r.advance(KEY, MODEL).token.id == top  # temperature 0: the model's pick is its argmax
    r.set_settings(KEY, TOP8)
    drawn = [r.draw_one("ada")[0].id for _ in range(30)]
    taken = r.advance(KEY, CLASS)
    assert taken.how == CLASS and r.run.generated[-1] == taken.token.id
    assert drawn.count(taken.token.id) == max(drawn.count(t) for t in drawn)  # (a tie: the more probable token)
    assert r.record().step == 2 and r.record().draw.total == 0  # a new step, a new draw


def test_the_class_pick_before_anyone_drew_is_refused_with_what_to_do(tiny):
    r = opened(tiny)
    with pytest.raises(ValueError, match="no draws at this step yet: wait for them, or append the model's pick"):
        r.advance(KEY, CLASS)


@pytest.mark.parametrize(
    ("action", "call"),
    [
        ("advance", lambda r, key: r.advance(key, MODEL)),
        ("change", lambda r, key: r.set_settings(key, SamplerSettings(temperature=0.5))),
        ("change", lambda r, key: r.set_kind(key, GUESS)),
        ("draw for", lambda r, key: r.draw_each(key, 10)),
        ("end", lambda r, key: r.end(key)),
    ],
)
def test_only_the_teacher_key_advances_changes_or_ends_the_round(tiny, action, call):
    r = opened(tiny)
    r.join("ada", 1)
    before = (r.record().step, r.record().settings, r.record().kind, r.record().draw.total, r.ended)
    for key in (None, "", "a guess", KEY + "x"):
        with pytest.raises(NotTeacher, match=f"only the teacher who started round K7QF can {action} it"):
            call(r, key)
    after = (r.record().step, r.record().settings, r.record().kind, r.record().draw.total, r.ended)
    assert after == before
    call(r, KEY)  # the key does it


def test_students_are_counted_as_they_join_and_leave_and_a_leavers_draws_leave_with_them(tiny):
    r = opened(tiny)
    for name in ("ada", "bob", "cy"):
        r.join(name, 1)
    r.draw_one("bob")
    r.leave("bob")
    record = r.record()
    assert (record.present, record.left, record.draw.total) == (2, 1, 0)
    with pytest.raises(ValueError, match="this page is not in round K7QF"):
        r.draw_one("bob")
    r.join("bob", 1)  # the same page back: the same student, their draw counted again
    assert (r.record().present, r.record().left, r.record().draw.total) == (3, 0, 1)


def test_a_seat_not_heard_from_is_counted_out_with_its_guesses_and_the_class_pick_ignores_it(tiny):
    now = [0.0]
    r = opened(tiny, kind=GUESS, clock=lambda: now[0])
    top1, other = r.record().guesses.top1.id, 65
    r.join("ada", 1)
    r.guess("ada", top1)
    for k in range(20):  # stuffers: they join, guess, and go quiet
        r.join(f"bot{k}", k)
        r.guess(f"bot{k}", other)
    assert r.record().guesses.guessed == 21
    for _ in range(3):  # ada's page asks after the round every 3 s; the bots' pages ask nothing
        now[0] += 3.0
        r.heard("ada")
    record = r.record()
    assert now[0] > GONE_S and (record.present, record.left, record.guesses.guessed) == (1, 20, 1)
    r.reveal(KEY)
    assert dict((t.id, n) for t, n in r.record().guesses.counts).get(other, 0) == 0
    assert r.advance(KEY, CLASS).token.id == top1  # the class's pick: ada's, not the 20 quiet seats'
    r.heard("bot3")  # a quiet page heard again counts again
    assert r.record().present == 2


def test_a_locked_round_refuses_new_seats_and_tells_them_to_ask_the_teacher(tiny):
    r = opened(tiny)
    r.join("ada", 1)
    r.lock_joining(KEY, True)
    assert r.record().locked
    with pytest.raises(ValueError, match="round K7QF is locked: the teacher has closed it to new students; ask the"):
        r.join("late", 2)
    r.join("ada", 1)  # a seat already here keeps it
    with pytest.raises(NotTeacher, match="only the teacher who started round K7QF can lock it"):
        r.lock_joining("a guess", False)
    r.lock_joining(KEY, False)
    r.join("late", 2)
    assert r.record().present == 2


def test_a_removed_seat_is_counted_out_with_its_draws_and_cannot_come_back(tiny):
    r = opened(tiny)
    for name in ("ada", "bob"):
        r.join(name, 1)
        r.draw_one(name)
    assert r.record().seats == ("ada", "bob")
    with pytest.raises(NotTeacher):
        r.remove("bob's forged key", "ada")
    r.remove(KEY, "bob")
    record = r.record()
    assert (record.present, record.left, record.draw.total, record.seats) == (1, 1, 1, ("ada",))
    for call in (lambda: r.draw_one("bob"), lambda: r.join("bob", 1)):
        with pytest.raises(ValueError, match="the teacher removed this page from round K7QF: ask the teacher"):
            call()
    assert r.seat("bob").removed
    with pytest.raises(ValueError, match="round K7QF has no seat 'nobody'"):
        r.remove(KEY, "nobody")


def test_a_seats_draws_above_a_persons_rate_are_refused_and_the_counts_stay_exact(tiny):
    now = [0.0]
    r = opened(tiny, clock=lambda: now[0], draws_per_s=DRAWS_PER_S)
    r.join("ada", 1)
    drawn = [r.draw_one("ada")[0].id for _ in range(DRAW_BURST)]  # a burst, at one instant
    with pytest.raises(ValueError, match="at most 3 draws a second for each page, as fast as a person presses"):
        r.draw_one("ada")
    assert r.numbers(KEY)["draw"]["total"] == DRAW_BURST  # the refused draw neither drawn nor counted
    for _ in range(12):  # a person pressing three times a second is never refused
        now[0] += 1 / DRAWS_PER_S
        drawn.append(r.draw_one("ada")[0].id)
    generator = torch.Generator().manual_seed(1)
    processed = process(r.run.logits, TOP8, r.run.ids, r.run.generated)
    assert drawn == [select(processed.final, TOP8, generator) for _ in drawn]  # the generator never skipped a draw
    assert r.numbers(KEY)["draw"]["total"] == len(drawn)


def test_the_rounds_numbers_are_the_teachers_alone(tiny):
    r = opened(tiny, kind=GUESS)
    for key in (None, "K7QF", "a guess"):
        with pytest.raises(NotTeacher, match="only the teacher who started round K7QF can read the numbers of it"):
            r.numbers(key)
    assert r.numbers(KEY)["guesses"]["top1"] == r.record().guesses.top1.id


def test_a_guess_sent_for_a_step_the_teacher_has_left_is_refused_with_why(tiny):
    r = opened(tiny, kind=GUESS)
    r.join("ada", 1)
    r.guess("ada", 65, step=0)
    r.advance(KEY, MODEL)
    with pytest.raises(ValueError, match="your guess was for step 1, and the teacher has moved on to step 2: guess"):
        r.guess("ada", 66, step=0)
    assert r.record().guesses.guessed == 0


def test_draw_n_each_draws_for_every_student_here_and_the_projector(tiny):
    r = opened(tiny)
    for name in ("ada", "bob", "cy"):
        r.join(name, 1)
    r.leave("cy")
    shown = r.shown
    assert r.draw_each(KEY, 7) == 21
    assert r.shown == shown + 1  # every student's page asks for its view: it shows the draws made for it
    assert {name: len(r.draw.by_student.get(name, [])) for name in ("ada", "bob", "cy", PROJECTOR)} == {
        "ada": 7,
        "bob": 7,
        "cy": 0,
        PROJECTOR: 7,
    }


def test_guesses_are_hidden_until_the_reveal_then_shown_beside_the_models_probabilities(tiny):
    r = opened(tiny, kind=GUESS)
    top1 = r.record().guesses.top1
    for name, token in (("ada", top1.id), ("bob", top1.id), ("cy", 65)):
        r.join(name, 1)
        r.guess(name, token)
    hidden = r.record().guesses
    assert (hidden.revealed, hidden.guessed, hidden.counts) == (False, 3, ())
    r.reveal(KEY)
    shown = r.record().guesses
    assert shown.top1_guessed == 2 and dict((t.id, n) for t, n in shown.counts)[65] == 1
    model = torch.softmax(r.run.logits, -1)
    assert all(abs(t.p - float(model[t.id])) < 1e-6 for t, _ in shown.counts)  # the model's own, not processed
    with pytest.raises(ValueError, match="revealed this step's guesses"):
        r.guess("ada", 66)


def test_a_students_ten_choices_are_the_models_top_ten_in_alphabetical_order_without_probabilities(tiny):
    r = opened(tiny, kind=GUESS)
    r.join("ada", 1)
    choices = r.seat("ada").choices
    top10 = torch.topk(torch.softmax(r.run.logits, -1), 10).indices.tolist()
    assert sorted(t.id for t in choices) == sorted(top10)
    assert [t.text.strip().lower() for t in choices] == sorted(t.text.strip().lower() for t in choices)
    assert {t.p for t in choices} == {0.0}


def test_a_typed_guess_is_one_token_read_with_its_leading_space_first(bundled):
    tok = bundled.tokenizer
    assert typed_token(tok, "Paris") == tok(" Paris", add_special_tokens=False).input_ids[0]
    assert typed_token(tok, " Paris") == typed_token(tok, "Paris")
    with pytest.raises(ValueError, match=r"'antidisestablishmentarianism' is \d+ tokens to this model"):
        typed_token(tok, "antidisestablishmentarianism")
    with pytest.raises(ValueError, match="type the token you expect next"):
        typed_token(tok, "  ")
    with pytest.raises(ValueError, match=r"^a guess is at most 100 characters \(one token\); got 'xxx") as told:
        typed_token(tok, "x" * 100_000)
    assert len(str(told.value)) < 120 and "100,002 characters" in str(told.value)  # a short prefix, and its length


def test_the_kind_decides_what_a_student_may_do(tiny):
    r = opened(tiny, kind=GUESS)
    r.join("ada", 1)
    with pytest.raises(ValueError, match="Draw is for a sample round; round K7QF is a guess round now"):
        r.draw_one("ada")
    with pytest.raises(ValueError, match="Greedy steps is for a greedy round"):
        r.greedy_step("ada")


def test_greedy_together_alone_every_students_tokens_agree_and_equal_the_solo_argmax_run(tiny, home):
    r = opened(tiny, kind=GREEDY)
    for name in ("ada", "bob"):
        r.join(name, 1)
        r.greedy_step(name, 6)
    record = r.record().greedy
    solo = loop.run_to_end(tiny, r.greedy.prompt, SamplerSettings(temperature=0.0), max_new_tokens=6)
    assert record.split is None and record.compared == 6
    assert dict(record.students) == {"ada": tuple(solo.token_ids), "bob": tuple(solo.token_ids)}
    assert record.passes == 12  # each student's steps, each chosen from a pass of its own (no scheduler here)
    assert record.across_servers == (home == "redis")  # the projector says each student's run is on their own server


def test_the_first_split_names_the_step_the_majority_and_each_student_who_wrote_otherwise():
    found, compared = first_split({"a": (1, 2, 3, 4), "b": (1, 2, 3, 9), "c": (1, 2, 7, 5), "d": (1, 2, 3)})
    assert found == (2, 3, {"c": 7}) and compared == 3
    assert first_split({"a": (1, 2), "b": (1, 2, 3)}) == (None, 2)  # a step one student reached is not compared
    assert first_split({"a": (5,)}) == (None, 0)


def test_an_ended_round_refuses_every_change_and_says_where_the_class_went(tiny):
    r = opened(tiny)
    r.join("ada", 1)
    r.draw_one("ada")
    r.end(KEY, "the teacher started round M9QX", moved_to="M9QX")
    record = r.record()
    assert record.ended and record.moved_to == "M9QX" and record.draw.total == 1  # what it showed, kept
    assert r.held_tokens() == []  # its caches let go
    with pytest.raises(ValueError, match=r"round K7QF has ended \(the teacher started round M9QX\): join round M9QX"):
        r.draw_one("ada")


def test_a_round_is_idle_from_its_last_action_not_from_being_read(tiny):
    now = [0.0]
    r = opened(tiny, clock=lambda: now[0])
    r.join("ada", 1)
    now[0] = 100.0
    r.record()
    r.seat("ada")
    assert r.idle_s() == 100.0
    r.draw_one("ada")
    assert r.idle_s() == 0.0


def test_a_round_holds_its_own_cache_and_one_for_each_students_greedy_run_at_their_longest(tiny):
    r = opened(tiny, kind=GREEDY, max_steps=8, greedy_length=4)
    prompt = len(r.prompt.ids)
    assert r.held_tokens() == [prompt + 8]
    r.join("ada", 1)
    r.greedy_step("ada")
    assert r.held_tokens() == [prompt + 8, prompt + 4]
