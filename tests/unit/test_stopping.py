"""Stop strings are matched on decoded text across tokens; possible starts are held back, then released or dropped."""

import pytest

from decoding import stopping
from decoding.loop import Run
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.stopping import EOS, MAX_TOKENS, STOP_STRING, split_text, stop_reason

STOPS = ("User:",)


def test_text_that_could_start_a_stop_string_is_held_back():
    assert split_text("Hello Us", STOPS) == stopping.TextState("Hello ", "Us", None)


def test_held_text_is_released_when_it_turns_out_not_to_be_a_stop_string():
    assert split_text("Hello User said", STOPS) == stopping.TextState("Hello User said", "", None)


def test_final_text_is_cut_before_the_stop_string():
    assert split_text("Hello User: more", STOPS) == stopping.TextState("Hello ", "", "User:")


def test_the_earliest_of_several_stop_strings_wins():
    assert split_text("a END b STOP", ("STOP", "END")).hit == "END"


def test_longest_possible_start_is_held():
    # "aab" could be the start of "aabc"; "b" alone could not
    assert split_text("xaab", ("aabc", "bz")).held == "aab"
    assert split_text("xaab", ("bz",)).held == "b"


def test_an_unfinished_multibyte_character_is_held_until_its_bytes_arrive():
    assert split_text("caf\ufffd", ()) == stopping.TextState("caf", "\ufffd", None)


@pytest.mark.parametrize(
    ("token_id", "n", "hit", "expected"),
    [(9, 1, None, EOS), (1, 1, "User:", STOP_STRING), (1, 5, None, MAX_TOKENS), (1, 4, None, None)],
)
def test_stop_reason_names_the_condition_that_fired(token_id, n, hit, expected):
    text = stopping.TextState("", "", hit)
    assert stop_reason(token_id, n, text, eos_ids=(9,), max_new_tokens=5) == expected


def test_a_run_without_stop_strings_stops_by_the_same_rule_given_no_text():
    # SpecRun's rounds match no stop strings
    assert stop_reason(9, 5, None, eos_ids=(9,), max_new_tokens=5) == EOS  # the end-of-sequence id before the limit
    assert stop_reason(1, 5, None, eos_ids=(9,), max_new_tokens=5) == MAX_TOKENS
    assert stop_reason(1, 4, None, eos_ids=(9,), max_new_tokens=5) is None


@pytest.mark.parametrize("bad", [[""], ["x" * 201], ["s"] * 17, [3]])
def test_bad_stop_strings_are_rejected(bad):
    with pytest.raises(ValueError, match="stop string"):
        stopping.check_stop_strings(bad)


# --- the same rules inside a run: forced byte tokens on the tiny model ------------------------


def _forced_run(tiny, text: str, stops=STOPS, max_new_tokens=64) -> tuple[Run, list[tuple[str, str]]]:
    """Force `text` byte by byte; returns the run and (visible, held) after each token."""
    run = Run(tiny, encode_prompt(tiny.tokenizer, "Hi", chat=False), max_new_tokens=max_new_tokens, stop_strings=stops)
    run.prefill()
    seen = []
    for token_id in tiny.tokenizer.encode(text, add_special_tokens=False):
        if run.done:
            break
        run.step(SamplerSettings(temperature=0), force_id=token_id)
        seen.append((run.trace.text, run.trace.held_text))
    return run, seen


def test_stream_user_said_holds_user_then_releases_it(tiny):
    run, seen = _forced_run(tiny, "Ok User said")
    assert seen[3:8] == [("Ok ", "U"), ("Ok ", "Us"), ("Ok ", "Use"), ("Ok ", "User"), ("Ok User ", "")]
    assert run.trace.text == "Ok User said" and not run.done


def test_stream_user_colon_stops_and_drops_the_stop_string(tiny):
    run, seen = _forced_run(tiny, "Ok User: and more")
    assert run.trace.stop_reason == STOP_STRING
    assert run.trace.text == "Ok " and run.trace.held_text == ""
    assert len(run.trace.steps) == len("Ok User:")  # the tokens that spelled it are in the trace
    assert run.logits is None  # no forward pass after the stop


def test_held_text_is_released_when_max_new_tokens_ends_the_run(tiny):
    run, _ = _forced_run(tiny, "Ok Use", max_new_tokens=6)
    assert run.trace.stop_reason == MAX_TOKENS
    assert run.trace.text == "Ok Use" and run.trace.held_text == ""


def test_going_back_past_a_stop_string_resumes_the_stream(tiny):
    run, _ = _forced_run(tiny, "Ok User:")
    run.back()
    assert not run.done and (run.trace.text, run.trace.held_text) == ("Ok ", "User")


def test_multibyte_character_split_across_tokens_is_held_then_shown(tiny):
    run, seen = _forced_run(tiny, "café", stops=())
    assert seen[-2] == ("caf", "\ufffd") and seen[-1] == ("café", "")


def test_eos_token_stops_the_run(tiny):
    run = Run(tiny, encode_prompt(tiny.tokenizer, "Hi", chat=True), max_new_tokens=8)
    run.prefill()
    run.step(SamplerSettings(temperature=0), force_id=tiny.eos_ids[0])
    assert run.trace.stop_reason == EOS and run.trace.token_ids == [tiny.eos_ids[0]] and run.trace.text == ""
