"""The glossary: one line per term, opened by a tap, a click or Enter where the term appears, and eos explained where
a run stops."""

import html

from visuals.glossary import CSS, EVERYDAY, HEAD, JS, TERMS, explain, stop_reason, term


def test_every_term_is_one_line_a_student_can_read():
    for name, sentence in TERMS.items():
        assert "\n" not in sentence and 30 < len(sentence) < 220, name


def test_a_term_is_a_button_shown_as_written_that_carries_its_explanation():
    shown = term("tick")
    assert shown.startswith('<button type="button" class="lab-term" title="') and shown.endswith(">tick</button>")
    assert html.escape(TERMS["tick"]) in shown
    assert term("kept", "0 of 0 kept").endswith(">0 of 0 kept</button>")


def test_the_pages_script_opens_a_term_on_a_click_and_closes_it_on_a_second_click_elsewhere_or_escape():
    # a button turns Enter and Space into a click, so one click handler serves a tap, a click and the keyboard
    assert "aria-expanded" in JS and "'Escape'" in JS and f"<script>{JS}</script>" == HEAD
    assert 'button.lab-term[aria-expanded="true"]::after' in CSS and "content: attr(title)" in CSS


def test_only_eos_needs_explaining_when_a_run_stops():
    assert "end-of-sequence" in stop_reason("eos") and stop_reason("max new tokens") == "max new tokens"
    assert explain("fast-forward").startswith("*fast-forward*: when the grammar allows only one continuation")


def test_the_terms_the_lessons_lean_on_are_in_the_glossary():
    for name in ("roofline", "MBU", "TTFT", "TPOT", "arithmetic intensity", "nats", "logit", "softmax", "KV cache"):
        assert name in TERMS, name


def test_every_everyday_word_left_out_of_the_scan_is_a_glossary_term():
    assert EVERYDAY.issubset(TERMS)
