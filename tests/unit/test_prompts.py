"""A prompt is raw text or a chat message in the model's template; the learner sees its exact text and tokens."""

import pytest

from decoding.prompts import MAX_PROMPT_CHARS, encode_prompt, token_texts
from decoding.tiny import tiny_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


def test_raw_text_is_encoded_as_it_is(tokenizer):
    p = encode_prompt(tokenizer, "Hi there", chat=False)
    assert p.text == "Hi there" and len(p.ids) == len("Hi there")  # byte-level: one token per byte
    assert "".join(p.tokens) == p.text


def test_chat_message_is_wrapped_in_the_template_with_the_assistant_turn_open(tokenizer):
    p = encode_prompt(tokenizer, "Hi", chat=True)
    assert p.text == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    # special tokens are single tokens, and the tokens spell out the exact text
    assert p.tokens[0] == "<|im_start|>" and p.tokens.count("<|im_end|>") == 1
    assert "".join(p.tokens) == p.text and len(p.tokens) == len(p.ids)


def test_chat_needs_a_template():
    bare = tiny_tokenizer()
    bare.chat_template = None
    with pytest.raises(ValueError, match="no chat template"):
        encode_prompt(bare, "Hi", chat=True)


@pytest.mark.parametrize("message", ["", "   \n", None])
def test_an_empty_prompt_is_refused(tokenizer, message):
    with pytest.raises(ValueError, match="the prompt is empty"):
        encode_prompt(tokenizer, message, chat=False)


def test_an_overlong_prompt_is_refused(tokenizer):
    with pytest.raises(ValueError, match="the limit is 20,000"):
        encode_prompt(tokenizer, "a" * (MAX_PROMPT_CHARS + 1), chat=False)


def test_a_prompt_that_fills_the_context_window_is_refused(tokenizer):
    with pytest.raises(ValueError, match="context window is 10 tokens"):
        encode_prompt(tokenizer, "0123456789", chat=False, context_length=10)


def test_lone_surrogates_are_replaced_rather_than_crashing_the_tokenizer(tokenizer):
    p = encode_prompt(tokenizer, "a\ud800b", chat=False)
    assert p.text == "a?b"


@pytest.mark.bundled
def test_bundled_chat_prompt_uses_smollm2s_template(bundled):
    p = encode_prompt(bundled.tokenizer, "What is the capital of France?", chat=True)
    assert p.text.endswith("<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n")
    assert len(p.ids) < 60 and p.tokens[0] == "<|im_start|>"


def test_a_token_holding_part_of_a_character_is_spelled_as_its_bytes(tokenizer):
    ids = tokenizer("a 🍕 café", add_special_tokens=False).input_ids
    texts = token_texts(tokenizer, ids)
    assert "\ufffd" not in "".join(texts)
    # the tiny tokenizer has one token per byte: the emoji's four bytes and é's two, the ASCII as text
    assert "".join(texts) == "a <0xF0><0x9F><0x8D><0x95> caf<0xC3><0xA9>"
