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
    """Each id's text. A token that holds only part of a character (a byte-level tokenizer writes an emoji or a CJK
    character as several tokens) has no text of its own: decoded alone it is U+FFFD. Its bytes are spelled instead,
    as <0xF0><0x9F>, the names byte-fallback vocabularies (llama's) give such tokens."""
    texts = tokenizer.batch_decode([[i] for i in ids])
    return [_spelled(tokenizer, i) or t if "\ufffd" in t else t for i, t in zip(ids, texts)]


def _byte_alphabet() -> dict[str, int]:
    """GPT-2's byte-level alphabet, reversed: the printable character that stands for each byte -> the byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


_BYTES = _byte_alphabet()


def _spelled(tokenizer, token_id: int) -> str | None:
    """The token's bytes, whole characters as text and the bytes of a split one as <0xXX>; None when the tokenizer
    does not use the byte-level alphabet."""
    piece = tokenizer.convert_ids_to_tokens(int(token_id))
    if not isinstance(piece, str) or any(c not in _BYTES for c in piece):
        return None
    text = bytes(_BYTES[c] for c in piece).decode("utf-8", "surrogateescape")
    # surrogateescape keeps each byte that is not part of a whole character as U+DC80..U+DCFF
    return "".join(f"<0x{ord(c) - 0xDC00:02X}>" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)
