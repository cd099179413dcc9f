"""Prompts become token ids here: raw text as it is, or a chat message wrapped in the model's template."""

from dataclasses import dataclass

MAX_PROMPT_CHARS = 20_000


@dataclass(frozen=True)
class Prompt:
    text: str  # exactly what the model reads, template included
    ids: list[int]
    tokens: list[str]  # each id's text, so token boundaries and leading spaces are visible


def encode_prompt(tokenizer, message: str, chat: bool, context_length: int | None = None) -> Prompt:
    """Raw text, or `message` as one user turn of the chat template with the assistant turn opened."""
    if not isinstance(message, str) or not message.strip():
        raise ValueError("the prompt is empty: type some text (or pick a preset)")
    if len(message) > MAX_PROMPT_CHARS:
        raise ValueError(f"the prompt has {len(message):,} characters; the limit is {MAX_PROMPT_CHARS:,}")
    # lone surrogates cannot be encoded as UTF-8; replace them rather than fail inside the tokenizer
    message = message.encode("utf-8", "replace").decode("utf-8")
    if chat:
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError("this model has no chat template: use raw text")
        messages = [{"role": "user", "content": message}]
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    else:
        text = message
    ids = tokenizer(text, add_special_tokens=not chat).input_ids
    if context_length is not None and len(ids) >= context_length:
        raise ValueError(
            f"the prompt is {len(ids):,} tokens; this model's context window is {context_length:,} tokens "
            "and generation needs room after the prompt"
        )
    return Prompt(text, ids, token_texts(tokenizer, ids))


def token_texts(tokenizer, ids) -> list[str]:
    return tokenizer.batch_decode([[i] for i in ids])
