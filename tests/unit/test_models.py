"""Models load once, on the device and dtype asked for, and failures say what works instead."""

import pytest
import torch

from decoding import models, tiny
from decoding.models import BUNDLED, TINY, ModelLoadError, load_model, resolve_device, resolve_dtype


def test_tiny_model_is_a_byte_level_chat_model_with_one_end_of_turn_id(tiny):
    assert tiny.vocab_size == 259 and tiny.chat
    assert tiny.eos_ids == (tiny.tokenizer.convert_tokens_to_ids("<|im_end|>"),)
    assert tiny.device == torch.device("cpu") and tiny.dtype == torch.float32 and tiny.dtype_name == "float32"
    assert not tiny.model.training


def test_loading_the_same_model_twice_returns_the_same_object(tiny):
    assert load_model(TINY, device="cpu") is tiny


def test_tiny_model_is_the_same_every_time_it_is_built():
    a, _ = tiny.tiny_model()
    b, _ = tiny.tiny_model()
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_dtype_can_be_chosen():
    lm = load_model(TINY, device="cpu", dtype="bfloat16")
    assert lm.dtype == torch.bfloat16 and next(lm.model.parameters()).dtype == torch.bfloat16


def test_auto_picks_cuda_only_when_present():
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_dtype(None, torch.device("cpu")) == torch.float32
    assert resolve_dtype("auto", torch.device("cuda")) == torch.bfloat16


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_asking_for_cuda_without_it_explains():
    with pytest.raises(ValueError, match="CUDA is not available"):
        resolve_device("cuda")


@pytest.mark.parametrize(
    ("fn", "arg", "message"), [(resolve_device, "tpu", "device must be"), (resolve_dtype, "int8", "dtype must be")]
)
def test_bad_device_or_dtype_is_rejected(fn, arg, message):
    args = (arg,) if fn is resolve_device else (arg, torch.device("cpu"))
    with pytest.raises(ValueError, match=message):
        fn(*args)


def test_a_model_off_the_allowlist_is_refused_without_a_download():
    with pytest.raises(ModelLoadError, match="not on the allowlist"):
        load_model("someone/unknown-model", device="cpu")


def test_allowed_models_start_with_the_bundled_one_and_take_extra_ids(monkeypatch):
    monkeypatch.setenv(models.EXTRA_ENV, "org/a, org/b")
    allowed = models.allowed_models()
    assert allowed[0] == BUNDLED and TINY in allowed and allowed[-2:] == ("org/a", "org/b")


@pytest.mark.bundled
def test_bundled_model_is_smollm2_with_its_end_of_turn_token(bundled):
    assert bundled.vocab_size == 49152 and bundled.chat
    assert bundled.tokenizer.convert_ids_to_tokens(list(bundled.eos_ids)) == ["<|im_end|>"]
    assert bundled.model.config.num_hidden_layers == 30
    assert (models.bundled_cache_dir() / "model.safetensors").exists()


def test_every_loaded_model_is_warmed_up_before_anyone_times_it(tiny):
    assert tiny.warm_up_ms is not None and tiny.warm_up_ms > 0
    assert tiny.load_seconds * 1e3 >= tiny.warm_up_ms  # the warm-up is part of loading, not of the first lesson
