"""What a class round's page shows, from hand-made records: the histogram's bars are the class's draws and its dashes
the counts the probabilities expect; before the first draw its bars are the probabilities; the projector shows the
code and the link; a student's ten choices carry no probabilities; the view's root says who looks and the kind."""

import dataclasses
import re

import pytest

from decoding.classround.records import (
    GREEDY,
    GUESS,
    SAMPLE,
    ChiSquare,
    DrawRecord,
    GreedyRecord,
    GuessRecord,
    RoundRecord,
    SeatRecord,
    Split,
    Token,
)
from tests.helpers.charts import read_chart
from visuals.classround.agreement import passes_html, verdict
from visuals.classround.histogram import EXPECTED, draws_chart, verdict_html
from visuals.classround.view import link, projector_parts, prompt_end, student_parts
from visuals.parts import changes
from visuals.tokens import visible_text

SETTINGS = {"temperature": 0.7, "top_k": 0, "top_p": 0.9, "min_p": 0.0}
CAT, DOG = Token(10, " cat", 0.5), Token(11, " dog", 0.3)


def drawn(total=10, shown=((CAT, 6), (DOG, 3)), other=1, chi=None) -> DrawRecord:
    return DrawRecord(1, 0, SETTINGS, total, shown, other, 0.2, 500, chi)


def guesses(revealed=False) -> GuessRecord:
    return GuessRecord(revealed, 3, CAT, 2, ((CAT, 2), (DOG, 1)) if revealed else ())


def greedy(split=None) -> GreedyRecord:
    return GreedyRecord(
        16, (("s1", (10, 11)), ("s2", (10, 12))), {10: " cat", 11: " dog", 12: " pet"}, split, 2, 4, 3, 2, 2e-5
    )


def rounded(kind=SAMPLE, draw=None, **more) -> RoundRecord:
    return RoundRecord(
        code="K7QF",
        kind=kind,
        step=0,
        prompt=more.pop("prompt", "The best pet is a"),
        appended=(),
        settings=SETTINGS,
        present=3,
        left=1,
        version=7,
        shown=3,
        draw=draw or drawn(),
        guesses=guesses(more.pop("revealed", False)),
        greedy=greedy(),
        **more,
    )


def test_the_histograms_bars_are_the_draws_and_its_dashes_the_counts_the_probabilities_expect():
    chart = read_chart(draws_chart(drawn()))
    assert chart.labels == ["␣cat", "␣dog", "498 others"]
    assert chart.series("the class's draws").y == [6, 3, 1]
    assert chart.series(EXPECTED).y == [5.0, 3.0, 2.0]  # 10 draws x p, the others' mass too
    assert "Draw 1: 10 draws at temperature 0.7, top-p 0.9" in chart.title


def test_before_the_first_draw_the_bars_are_the_probabilities_every_draw_is_drawn_from():
    chart = read_chart(draws_chart(drawn(total=0, shown=((CAT, 0), (DOG, 0)), other=0)))
    assert chart.names == ["the probability each draw is drawn with"]
    assert chart.data[0].y == [0.5, 0.3, 0.2]


def test_the_verdict_says_whether_the_draws_fit_at_the_one_percent_level():
    fits = verdict_html(drawn(chi=ChiSquare(3.1, 2, 0.21, 3, 0)))
    fails = verdict_html(drawn(chi=ChiSquare(13.1, 2, 0.0014, 3, 0)))
    assert "p = 0.210, the draws fit the probabilities" in fits
    assert "p = 0.001, the draws do not fit the probabilities at the 1% level" in fails
    assert "needs two tokens that each expect 5 draws" in verdict_html(drawn(total=3))


def test_the_projector_shows_the_code_the_link_who_is_here_and_the_context():
    parts = projector_parts(rounded())
    assert 'data-role="teacher" data-kind="sample"' in parts.html
    assert f'href="{link("K7QF").replace("&", "&amp;")}"' in parts.html and ">K7QF</b>" in parts.html
    assert "3 students here (1 left)" in parts.html and "The best pet is a" in parts.html


def test_a_new_draw_sends_only_the_slots_it_changed():
    before, after = projector_parts(rounded()), projector_parts(rounded(draw=drawn(total=11, other=2)))
    ops = changes(before, after)
    assert {op[1] for op in ops} == {".classround-view", ".classround-v-verdict", ".classround-v-main"}


def test_guesses_stay_hidden_on_the_projector_until_the_reveal():
    hidden = projector_parts(rounded(GUESS)).html
    assert "3 guesses from 3 students here" in hidden and "lc-bar" not in hidden
    shown = projector_parts(rounded(GUESS, revealed=True)).html
    assert re.search(r"2 of 3 guessed the .*top-1.*, ␣cat \(50% of the model", shown)
    assert read_chart(shown).series("the class's guesses").y == pytest.approx([2 / 3, 1 / 3], abs=1e-6)


def test_a_students_choices_are_buttons_with_the_step_and_token_ids_and_no_probabilities():
    seat = SeatRecord("s1", 42, (Token(11, " dog", 0.0), Token(10, " cat", 0.0)), None, (), {}, (), 0)
    html = student_parts(rounded(GUESS), seat).html
    assert 'data-role="student" data-kind="guess"' in html
    assert re.findall(r'classround-choice" data-key="(\d+:\d+)"', html) == ["0:11", "0:10"]
    assert "%" not in html.split("classround-v-main")[1]


def test_greedy_together_says_every_token_agreed_or_names_the_first_split_and_the_float_noise():
    assert "Every token agreed" in verdict(greedy())
    split = Split(1, Token(11, " dog", 0.0), (("s2", Token(12, " pet", 0.0)),))
    said = verdict(greedy(split))
    assert "At step 2 not every token agreed" in said and "s2 wrote ␣pet" in said
    assert "float noise" in passes_html(greedy()) and "2.0e-05" in passes_html(greedy())
    assert "3 of them shared with other sessions (up to 2 in one)" in passes_html(greedy())
    assert "several servers" not in passes_html(greedy())  # one server: nothing to say
    hall = passes_html(dataclasses.replace(greedy(), across_servers=True))
    assert "each student's greedy run lives on their own server" in hall  # a lecture hall says what stays per server
    assert 'data-kind="greedy"' in projector_parts(rounded(GREEDY)).html


def test_a_chat_prompt_is_shortened_between_its_tokens_never_inside_a_special_token():
    tokens = ("<|im_start|>", "user", "\n", "Tell", " me", " a", " story", "<|im_end|>", "\n", "<|im_start|>")
    tokens += ("assistant", "\n")
    record = rounded(prompt="".join(tokens), prompt_tokens=tokens)
    shown = prompt_end(record, chars=40)
    ends = {"".join(visible_text(t) for t in tokens[k:]) for k in range(1, len(tokens))}
    assert shown.startswith("…") and shown[1:] in ends  # whole tokens: no "…m_start|>"
    assert prompt_end(record, chars=1000) == "".join(visible_text(t) for t in tokens)


def test_the_projector_lists_the_seats_here_to_remove_and_says_when_the_round_is_locked():
    parts = projector_parts(rounded(seats=("s1a2b3", "s9f8e7"), locked=True)).html
    assert re.findall(r'class="classround-seat" data-seat="(\w+)"', parts) == ["s1a2b3", "s9f8e7"]
    assert "Locked: no new students" in parts and "classround-link" not in parts
