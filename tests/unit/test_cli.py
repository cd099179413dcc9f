"""`python -m decoding`: the completion, or the whole trace as JSON and nothing else; bad values exit 2 in one line."""

import json
import os
import subprocess
import sys

import pytest
import torch

from decoding.__main__ import build_parser, main, settings_from
from decoding.knobs import SEED_MAX
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt

TINY_ARGS = ["--model", "tiny-random", "--device", "cpu", "--max-new-tokens", "6"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "decoding", *args], capture_output=True, text=True, timeout=300, env=env, check=False
    )


def _json(capsys, *args: str) -> dict:
    assert main([*TINY_ARGS, *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_options_not_given_are_off_never_generates_top_k_50():
    assert settings_from(build_parser().parse_args(["--prompt", "x"])) == SamplerSettings()


def test_json_mode_prints_only_the_trace_in_a_real_process():
    done = _cli(*TINY_ARGS, "--prompt", "Hello", "--json")
    assert done.returncode == 0, done.stderr
    trace = json.loads(done.stdout)  # fails if anything else reached stdout
    assert len(trace["token_ids"]) == 6 and trace["stop_reason"] == "max_new_tokens"
    step = trace["steps"][0]
    assert {"token_id", "prob_after", "top"} <= step.keys() and {"id", "text", "prob_before"} <= step["top"][0].keys()
    assert trace["timing"]["prefill_ms"] > 0 and len(trace["timing"]["decode_ms"]) == 5


def test_bad_value_prints_one_line_and_exits_2_in_a_real_process():
    done = _cli(*TINY_ARGS, "--prompt", "Hello", "--top-p", "0")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines()[-1] == (
        "python -m decoding: error: Top-p must be between 0.01 and 1 (1 = off), got 0.0"
    )
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--top-k", "-1"], "Top-k must be a whole number in [0, 200] (0 = off), got -1"),
        (["--top-k", "1.5"], "argument --top-k: invalid int value: '1.5'"),
        (["--min-p", "1"], "Min-p must be between 0 and 0.99 (0 = off), got 1.0"),
        (["--temperature", "nan"], "Temperature must be 0 (greedy) or between 0.01 and 3, got nan"),
        # the teaching ranges of the page hold here too: one rule for every tab, link and the command line
        (["--temperature", "5"], "Temperature must be 0 (greedy) or between 0.01 and 3, got 5.0"),
        (["--repetition-penalty", "0"], "Repetition penalty must be between 0.5 and 2 (1 = off), got 0.0"),
        (["--max-new-tokens", "0"], "max_new_tokens must be an integer in [1, 4096], got 0"),
        (["--order", "random"], "argument --order: invalid choice"),
        (["--model", "nobody/none"], "not on the allowlist"),
        (["--dtype", "int8"], "dtype must be one of"),
        (["--seed", "-5"], f"argument --seed: the seed must be a whole number in [0, {SEED_MAX}], got '-5'"),
        (["--seed", str(SEED_MAX + 1)], f"the seed must be a whole number in [0, {SEED_MAX}], got '{SEED_MAX + 1}'"),
    ],
)
def test_bad_values_give_one_clear_line_and_status_2(capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        code = main([*TINY_ARGS, "--prompt", "Hello", *args])
        raise SystemExit(code)
    captured = capsys.readouterr()
    assert stop.value.code == 2 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], captured.err


def test_empty_prompt_is_an_error(capsys):
    assert main([*TINY_ARGS, "--prompt", " "]) == 2
    assert "the prompt is empty" in capsys.readouterr().err


def test_plain_mode_prints_the_completion_only(capsys):
    trace = _json(capsys, "--prompt", "Hello", "--temperature", "0")
    assert main([*TINY_ARGS, "--prompt", "Hello", "--temperature", "0"]) == 0
    assert capsys.readouterr().out == trace["text"] + "\n"


def test_chat_is_the_default_when_the_model_has_a_template(capsys):
    assert _json(capsys, "--prompt", "Hi")["prompt"].startswith("<|im_start|>user\nHi")
    assert _json(capsys, "--prompt", "Hi", "--no-chat")["prompt"] == "Hi"


def test_seed_matches_torch_manual_seed_before_generate(capsys, tiny):
    trace = _json(capsys, "--prompt", "Hello", "--seed", "4", "--top-k", "30", "--temperature", "1.2")
    prompt = encode_prompt(tiny.tokenizer, "Hello", chat=True)
    ids = torch.tensor([prompt.ids])  # (1, T)
    torch.manual_seed(4)
    out = tiny.model.generate(
        ids, attention_mask=torch.ones_like(ids), do_sample=True, top_k=30, temperature=1.2, max_new_tokens=6
    )
    assert trace["token_ids"] == out[0, len(prompt.ids) :].tolist()


def test_static_writes_the_same_tokens_and_says_so_in_each_step(capsys):
    plain = _json(capsys, "--prompt", "Hello", "--temperature", "0.9", "--seed", "3")
    static = _json(capsys, "--prompt", "Hello", "--temperature", "0.9", "--seed", "3", "--static")
    assert static["token_ids"] == plain["token_ids"]
    assert [s["pass_kind"] for s in static["steps"][1:]] == ["static"] * (len(static["steps"]) - 1)


def test_stop_strings_and_sampler_options_reach_the_trace(capsys):
    trace = _json(capsys, "--prompt", "Hi", "--stop", "ab", "cd", "--stop", "ef", "--min-p", "0.05", "--order", "vllm")
    assert trace["stop_strings"] == ["ab", "cd", "ef"]
    assert trace["steps"][0]["settings"]["min_p"] == 0.05 and trace["steps"][0]["settings"]["order"] == "vllm"


@pytest.mark.bundled
def test_bundled_model_answers_paris_from_the_command_line():
    args = ["--prompt", "What is the capital of France?", "--max-new-tokens", "20", "--temperature", "0", "--json"]
    done = _cli(*args)
    assert done.returncode == 0, done.stderr
    trace = json.loads(done.stdout)
    assert "Paris" in trace["text"] and trace["stop_reason"] in ("eos", "max_new_tokens")


def test_num_beams_gives_the_best_beam_as_token_ids(capsys, tiny):
    trace = _json(
        capsys, "--prompt", "Hello", "--num-beams", "3", "--length-penalty", "0.5", "--early-stopping", "never"
    )
    prompt = encode_prompt(tiny.tokenizer, "Hello", chat=True)
    ids = torch.tensor([prompt.ids])  # (1, T)
    out = tiny.model.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        num_beams=3,
        do_sample=False,
        length_penalty=0.5,
        early_stopping="never",
        max_new_tokens=6,
    )
    new = out[0, len(prompt.ids) :].tolist()
    if tiny.eos_ids[0] in new:  # generate pads the rows that ended early
        new = new[: new.index(tiny.eos_ids[0]) + 1]
    assert trace["token_ids"] == new and trace["num_beams"] == 3
    assert trace["early_stopping"] == "never" and trace["steps"][0]["candidates"]
    args = ["--prompt", "Hello", "--num-beams", "3", "--length-penalty", "0.5", "--early-stopping", "never"]
    assert main([*TINY_ARGS, *args]) == 0
    assert capsys.readouterr().out == trace["text"] + "\n"


def test_one_beam_is_the_sampling_path(capsys):
    trace = _json(capsys, "--prompt", "Hello", "--num-beams", "1", "--temperature", "0")
    assert "stop_reason" in trace and "num_beams" not in trace


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--num-beams", "0"], "num_beams must be an integer in [1, 16], got 0"),
        (["--num-beams", "17"], "num_beams must be an integer in [1, 16], got 17"),
        (["--num-beams", "2", "--length-penalty", "nan"], "length_penalty must be a number in [-5, 5]"),
        (["--num-beams", "2", "--length-penalty", "9"], "length_penalty must be a number in [-5, 5]"),
        (["--early-stopping", "maybe"], "early stopping must be true, false or never, got 'maybe'"),
        (["--num-beams", "2", "--stop", "x"], "stop strings are not supported with beam search"),
    ],
)
def test_bad_beam_values_give_one_clear_line_and_status_2(capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        raise SystemExit(main([*TINY_ARGS, "--prompt", "Hello", *args]))
    captured = capsys.readouterr()
    assert stop.value.code == 2 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], captured.err


def test_a_regex_constrains_the_answer_on_the_command_line(capsys):
    trace = _json(capsys, "--prompt", "When?", "--regex", "[0-9]{4}-[0-9]{2}", "--max-new-tokens", "12")
    assert __import__("re").fullmatch("[0-9]{4}-[0-9]{2}", trace["text"]) and trace["stop_reason"] == "eos"


def test_choices_and_a_json_schema_file_constrain_the_answer(capsys, tmp_path):
    assert main([*TINY_ARGS, "--prompt", "Yes?", "--choices", "yes,no", "--temperature", "0"]) == 0
    assert capsys.readouterr().out.strip() in ("yes", "no")
    schema = tmp_path / "schema.json"
    schema.write_text(
        '{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 9}}, "required": ["n"], '
        '"additionalProperties": false}'
    )
    trace = _json(capsys, "--prompt", "n?", "--json-schema", str(schema), "--max-new-tokens", "16")
    assert json.loads(trace["text"])["n"] <= 9 and any(s["grammar_forced"] for s in trace["steps"])


def test_a_malformed_regex_exits_2_naming_what_is_wrong(capsys):
    assert main([*TINY_ARGS, "--prompt", "x", "--regex", "[a-"]) == 2
    assert "unclosed character class" in capsys.readouterr().err
    assert main([*TINY_ARGS, "--prompt", "x", "--json-schema", "/nonexistent.json"]) == 2
    assert "cannot read the json schema file" in capsys.readouterr().err
