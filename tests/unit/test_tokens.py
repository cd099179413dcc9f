"""Token display: one rule for how a token's boundaries and invisible characters are shown."""

from visuals.tokens import BIDI_CONTROLS, visible_text, visible_token


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


def test_bytes_of_a_character_written_in_pieces_come_with_the_note():
    from visuals.step.sequence import chips_html
    from visuals.tokens import BYTES_NOTE, has_bytes

    assert has_bytes([" <0xF0><0x9F>", "<0x8D>"]) and not has_bytes([" café", "<b>", "<0x>"])
    assert BYTES_NOTE in chips_html([" <0xF0><0x9F>", "<0x8D>"], [1, 2], []).replace("&lt;", "<").replace("&gt;", ">")
    assert "one byte" not in chips_html([" café"], [1], [])


def test_a_bidirectional_control_shows_as_its_name_and_turns_nothing_around():
    # an unclosed right-to-left override in a prompt reversed the rest of the projector's line
    assert visible_text("Paris \u202eis the capital") == "Paris ⟨RLO⟩is the capital"
    assert visible_token("\u2067x\u2069") == "⟨RLI⟩x⟨PDI⟩"
    assert not any(ch in visible_text("".join(BIDI_CONTROLS)) for ch in BIDI_CONTROLS)
