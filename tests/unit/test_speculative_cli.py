"""`python -m decoding --speculative ...`: the tokens and one record per round; greedy equals plain greedy; bad K
or L exits 2 with the range."""

import json

import pytest

from decoding.__main__ import main

TINY = ["--model", "tiny-random", "--device", "cpu", "--prompt", "abcabc abcabc abc", "--no-chat", "--temperature", "0"]


def run(capsys, *args) -> dict:
    assert main([*TINY, *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


DRAFTS = [["--speculative", "prompt-lookup"], ["--speculative", "early-exit", "--exit-layer", "1"]]


@pytest.mark.parametrize("draft", DRAFTS)
def test_json_gives_the_tokens_of_plain_greedy_and_a_record_per_round(capsys, draft):
    plain = run(capsys, "--max-new-tokens", "16")["token_ids"]
    out = run(capsys, "--max-new-tokens", "16", *draft, "--draft-tokens", "3")
    assert out["token_ids"] == plain
    assert sum(r["kept"] for r in out["rounds"]) == len(plain)
    first = out["rounds"][0]
    assert {"drafted", "accepted", "bonus_id", "draft_ms", "verify_ms"} <= set(first)
    assert out["summary"]["target_passes"] == len(out["rounds"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--speculative", "prompt-lookup", "--draft-tokens", "0"], "draft tokens K must be a whole number in [1, 16]"),
        (["--speculative", "early-exit", "--exit-layer", "2"], "exit layer L must be a whole number in [1, 1]"),
        (["--speculative", "early-exit"], "exit layer L must be a whole number in [1, 1]"),
    ],
)
def test_bad_k_or_l_prints_the_range_and_exits_2(capsys, args, message):
    assert main([*TINY, *args]) == 2
    assert message in capsys.readouterr().err
