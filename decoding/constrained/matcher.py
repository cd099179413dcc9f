"""The grammar's state during one run: which tokens are legal next, which are forced, and going back.

llguidance walks the grammar byte by byte over a trie of the tokenizer's vocabulary, so one mask over all 49,152
tokens costs well under a millisecond in most states. The mask comes as a bitmask (one bit per token); here it
becomes the (V,) boolean keep-mask every other filter returns. A token the grammar refuses is refused before the
matcher sees it: a matcher that consumes an illegal token stays in an error state for good.
"""

import threading

import numpy as np
import torch
from llguidance import LLMatcher, LLTokenizer
from llguidance.hf import from_tokenizer

from decoding.clock import Timer
from decoding.constrained.kinds import Constraint, compile_grammar

_VIEWS: dict[tuple, LLTokenizer] = {}
_VIEWS_LOCK = threading.Lock()


def tokenizer_view(tokenizer, vocab_size: int) -> LLTokenizer:
    """llguidance's view of a fast tokenizer (its token bytes in a trie), built once per tokenizer (~1-2 s)."""
    key = (id(tokenizer), vocab_size)
    with _VIEWS_LOCK:
        if key not in _VIEWS:
            _VIEWS[key] = from_tokenizer(tokenizer, n_vocab=vocab_size)
        return _VIEWS[key]


def unpack_bitmask(bits: bytes, vocab_size: int) -> torch.Tensor:
    """llguidance's bitmask (bit i of 32-bit word i // 32 = token i is legal) -> (V,) bool keep-mask."""
    flat = np.unpackbits(np.frombuffer(bits, dtype=np.uint8), bitorder="little")[:vocab_size]  # (V,)
    return torch.from_numpy(flat.astype(bool))


class GrammarState:
    """One run's matcher: the legal tokens now, the forced ones, consume and roll back, and the time masks took."""

    def __init__(self, constraint: Constraint, tokenizer, vocab_size: int, device: torch.device | str = "cpu"):
        self.constraint, self.vocab_size, self.device = constraint, vocab_size, torch.device(device)
        view = tokenizer_view(tokenizer, vocab_size)
        self.matcher = LLMatcher(view, compile_grammar(constraint, view), log_level=0)
        self.tokenizer, self.eos = tokenizer, view.eos_token
        self.consumed = 0
        self.ended = False  # the end-of-sequence token was taken: it ends the run and never enters the matcher
        self._mask: tuple[torch.Tensor, float] | None = None  # (mask, ms) of the current state, until it changes

    def keep_mask(self) -> tuple[torch.Tensor, float]:
        """The (V,) bool mask of legal next tokens on the run's device, and the ms it took (cached per state)."""
        assert not self.ended, "the answer has ended: nothing comes after the end token"
        if self._mask is None:
            with Timer(self.device) as t:
                mask = unpack_bitmask(self.matcher.compute_bitmask(), self.vocab_size).to(self.device)  # (V,)
            self._mask = (mask, t.ms)
        return self._mask

    def forced(self) -> list[int]:
        """Tokens the grammar forces from here (one legal continuation of bytes, in its usual tokenization); once
        the grammar is complete and can take nothing more, the end-of-sequence token."""
        if self.matcher.is_stopped():
            return [self.eos]
        return list(self.matcher.compute_ff_tokens())

    def legal(self, token_id: int) -> bool:
        return bool(self.keep_mask()[0][token_id])

    def consume(self, token_id: int) -> None:
        if not self.legal(token_id):
            raise ValueError(self.refusal(token_id))
        # llguidance does not count an end token in what it can roll back, so it stays out of the matcher
        self._mask = None
        if token_id == self.eos:
            self.ended, self.consumed = True, self.consumed + 1
            return
        if not self.matcher.consume_token(token_id):
            raise RuntimeError(f"llguidance refused a token its mask allowed: {self.matcher.get_error()}")
        self.consumed += 1

    def rollback(self, n: int = 1) -> None:
        if not (0 <= n <= self.consumed):
            raise ValueError(f"can roll back 0..{self.consumed} tokens, got {n}")
        self._mask = None
        if n and self.ended:
            self.ended, self.consumed, n = False, self.consumed - 1, n - 1
        if n and not self.matcher.rollback(n):
            raise RuntimeError(f"llguidance could not roll back {n} tokens: {self.matcher.get_error()}")
        self.consumed -= n

    @property
    def accepting(self) -> bool:
        """The text so far is a complete answer (the grammar may still allow more)."""
        return self.matcher.is_accepting()

    def refusal(self, token_id: int, shown: int = 8) -> str:
        """Why `token_id` cannot come next, naming what can."""
        mask, _ = self.keep_mask()
        legal = mask.nonzero().flatten().tolist()
        names = ", ".join(repr(self.tokenizer.decode([i])) + f" ({i})" for i in legal[:shown])
        more = f" and {len(legal) - shown:,} more" if len(legal) > shown else ""
        text = repr(self.tokenizer.decode([token_id])) if 0 <= token_id < self.vocab_size else "?"
        return (
            f"token {text} (id {token_id}) is not legal here under the {self.constraint.label}; "
            f"the grammar allows {len(legal):,} token{'s' if len(legal) != 1 else ''}: {names}{more}"
        )
