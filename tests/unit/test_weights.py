"""--weights: the app and the CLI serve the chosen format; float32 is the model as loaded, int8 stays close to it."""

import json

import pytest
import torch

from decoding.__main__ import main
from decoding.models import BUNDLED, TINY, load_model
from decoding.quantization.compare import kl_divergence, same_top1
from decoding.quantization.linear import QuantLinear
from ui.context import AppConfig, weights_note


def test_float32_weights_are_the_model_as_loaded(tiny):
    assert load_model(TINY, device="cpu", weights="float32") is tiny and tiny.weights == "float32"
    assert not any(isinstance(m, QuantLinear) for m in tiny.model.modules())


def test_int8_weights_serve_a_quantized_copy_and_leave_float32_alone(tiny):
    lm = load_model(TINY, device="cpu", weights="int8")
    assert lm.weights == "int8" and lm.model is not tiny.model and "int8 weights" in lm.label
    assert isinstance(lm.model.get_output_embeddings(), QuantLinear)
    assert not any(isinstance(m, QuantLinear) for m in tiny.model.modules())


def test_unknown_weights_name_the_ones_served():
    with pytest.raises(ValueError, match="float32, bfloat16, int8, int4"):
        load_model(TINY, device="cpu", weights="int8-activations")


def test_the_header_says_which_weights_are_served():
    assert "float32" in weights_note(AppConfig(TINY, "cpu"))
    assert "int8 weight-only" in weights_note(AppConfig(TINY, "cpu", weights="int8"))
    assert "simulated" in weights_note(AppConfig(TINY, "cpu", weights="int4"))


def test_the_cli_decodes_with_the_chosen_weights(capsys):
    args = ["--model", TINY, "--device", "cpu", "--prompt", "Hi", "--max-new-tokens", "4", "--temperature", "0"]
    assert main([*args, "--weights", "int8", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["steps"]) == 4


@torch.inference_mode()
def test_bundled_int8_stays_within_the_measured_kl_of_our_float32_run(bundled):
    int8 = load_model(BUNDLED, device="cpu", weights="int8")
    prompt = bundled.tokenizer("The ferry leaves at", return_tensors="pt").input_ids  # (1, T)
    ids = bundled.model.generate(prompt, max_new_tokens=8, do_sample=False)  # (1, T + 8): our float32 run
    ref = bundled.model(input_ids=ids).logits[0, prompt.shape[1] - 1 : -1]  # (8, V)
    got = int8.model(input_ids=ids).logits[0, prompt.shape[1] - 1 : -1]
    # bench/quantization.py measured a mean KL of ~0.004 and ~95% top-1 agreement over the held-out text
    assert float(kl_divergence(ref, got).mean()) < 0.02
    assert int(same_top1(ref, got).sum()) >= 6
