"""Token display: one rule for how a token's boundaries and invisible characters are shown."""

from visuals.tokens import visible_text, visible_token


def test_a_token_shows_its_leading_space_newline_and_tab():
    assert visible_token(" the") == "␣the"
    assert visible_token("\n\t") == "↵⇥"


def test_an_empty_token_shows_as_the_empty_set():
    assert visible_token("") == "∅"


def test_running_text_keeps_its_spaces_and_shows_line_breaks():
    assert visible_text("once upon\na\ttime") == "once upon↵a⇥time"
    assert visible_text("") == ""


def test_neither_escapes_html_the_caller_does():
    assert visible_token("<b>") == "<b>" and visible_text("&") == "&"
