"""The repetition experiment on the tiny model: one run per seed, cancel, the inputs it refuses; token pieces."""

import pytest

from decoding.beams import repetition as rep
from decoding.loop import run_to_end
from decoding.prompts import encode_prompt
from decoding.watch import Watch


def test_token_pieces_join_to_the_text_and_keep_multibyte_characters_whole(tiny):
    text = "Hello 🌍 world, שלום"
    ids = tiny.tokenizer(text, add_special_tokens=False).input_ids
    pieces = rep.token_pieces(tiny.tokenizer, ids)
    assert len(pieces) == len(ids) and "".join(pieces) == text
    assert not any("\ufffd" in p for p in pieces)


def test_experiment_runs_each_setting_with_one_run_per_seed(tiny):
    exp = rep.run_repetition_experiment(tiny, "hello there", ("greedy", "temperature"), max_new_tokens=20, n_seeds=2)
    assert [len(exp.runs[k]) for k in ("greedy", "temperature")] == [1, 2]  # argmax ignores the seed
    rows = exp.summaries()
    assert [r["label"] for r in rows] == ["greedy", "temperature 1.0"]
    assert all(len(r["tokens"]) == len(r["mask"]) for r in rows)


def test_experiment_greedy_is_reproducible(tiny):
    a, b = (rep.run_repetition_experiment(tiny, "hello", ("greedy",), max_new_tokens=20) for _ in range(2))
    assert a.runs["greedy"][0].ids == b.runs["greedy"][0].ids


def test_cancel_keeps_every_settings_tokens_so_far_all_of_one_length(tiny):
    messages = []
    # ask to stop once the sixth token has been announced: the check before the seventh stops, six tokens each
    watch = Watch(lambda fraction, message: messages.append(message), lambda: any("token 6 of" in m for m in messages))
    exp = rep.run_repetition_experiment(tiny, "hi", ("greedy", "presence"), max_new_tokens=20, watch=watch)
    assert exp.cancelled and list(exp.runs) == ["greedy", "presence"]
    assert [len(runs[0].ids) for runs in exp.runs.values()] == [6, 6]


def test_a_cancel_during_the_prefills_keeps_nothing(tiny):
    watch = Watch(lambda fraction, message: None, lambda: True)
    exp = rep.run_repetition_experiment(tiny, "hi", ("greedy", "presence"), max_new_tokens=20, watch=watch)
    assert exp.cancelled and exp.runs == {} and exp.summaries() == []


def test_the_runs_side_by_side_choose_what_each_would_alone(tiny):
    """Greedy and a penalty side by side in packed passes, against each setting run alone (its own passes, as
    `generate()`): the same tokens on the tiny model, where float noise moves no argmax."""
    exp = rep.run_repetition_experiment(tiny, "hello there", ("greedy", "repetition"), max_new_tokens=20)
    prompt = encode_prompt(tiny.tokenizer, "hello there", True, tiny.context_length)
    for key in ("greedy", "repetition"):
        alone = run_to_end(tiny, prompt, rep.SETTINGS[key].settings, max_new_tokens=20, top_n=1)
        ids = alone.token_ids[:-1] if alone.stop_reason == "eos" else alone.token_ids
        assert exp.runs[key][0].ids == ids, key


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"keys": ()}, "settings"),
        ({"keys": ("nope",)}, "settings"),
        ({"max_new_tokens": 5}, "tokens per setting"),
        ({"n_seeds": 9}, "seeds"),
    ],
)
def test_experiment_rejects_bad_values_naming_the_range(tiny, kwargs, match):
    with pytest.raises(ValueError, match=match):
        rep.run_repetition_experiment(tiny, "hi", **{"keys": ("greedy",), **kwargs})
