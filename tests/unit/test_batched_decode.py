"""The batched greedy loop: left padding and positions as generate() makes them, and the same tokens."""

import pytest
import torch

from decoding.nondeterminism.batched_decode import greedy_batch, left_pad, pad_id, positions

PROMPTS = ["Hello there", "A much longer prompt than the first one", "hi"]


def encode(lm, texts):
    return [lm.tokenizer(t).input_ids for t in texts]


def test_left_pad_matches_the_tokenizers_left_padding(tiny):
    tok = tiny.tokenizer
    side = tok.padding_side
    tok.padding_side = "left"
    try:
        expected = tok(PROMPTS, padding=True, return_tensors="pt")
    finally:
        tok.padding_side = side
    ids, mask = left_pad(encode(tiny, PROMPTS), tok.pad_token_id)
    assert torch.equal(ids, expected.input_ids) and torch.equal(mask, expected.attention_mask)


def test_positions_count_real_tokens_only_and_padding_gets_zero():
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    assert positions(mask).tolist() == [[0, 0, 0, 1, 2], [0, 1, 2, 3, 4]]


def test_left_pad_refuses_an_empty_row():
    with pytest.raises(ValueError, match="at least one token"):
        left_pad([[1, 2], []], 0)


@pytest.mark.parametrize("texts", [PROMPTS, PROMPTS[:1] * 3], ids=["padded", "same-length"])
def test_batched_greedy_equals_generate_row_by_row(tiny, texts):
    rows = encode(tiny, texts)
    run = greedy_batch(tiny, rows, 20, keep_rows=range(len(rows)))
    ids, mask = left_pad(rows, pad_id(tiny))
    out = tiny.model.generate(ids, attention_mask=mask, do_sample=False, max_new_tokens=20, pad_token_id=pad_id(tiny))
    generated = out[:, ids.shape[1] :]  # (B, <= N): generate stops a row at EOS and pads the rest
    for b in range(len(rows)):
        ours = run.ids[b].tolist()
        eos = next((i for i, t in enumerate(ours) if t in tiny.eos_ids), len(ours) - 1)
        assert ours[: eos + 1] == generated[b, : eos + 1].tolist()
    assert run.ids.shape == (len(rows), 20) and run.logits.shape == (len(rows), 20, tiny.vocab_size)


def test_batched_greedy_keeps_going_after_eos(tiny):
    # a fixed number of tokens, so runs compare token by token
    run = greedy_batch(tiny, encode(tiny, PROMPTS), 30)
    assert run.ids.shape == (3, 30)


def test_batch_of_one_twice_is_bit_identical(tiny):
    rows = encode(tiny, PROMPTS[:1])
    a, b = greedy_batch(tiny, rows, 12), greedy_batch(tiny, rows, 12)
    assert torch.equal(a.ids, b.ids) and torch.equal(a.logits, b.logits)


def test_watch_can_cancel_between_forward_passes(tiny):
    from decoding.watch import Cancelled, Watch

    calls = []
    watch = Watch(should_stop=lambda: len(calls) >= 3)
    with pytest.raises(Cancelled):
        greedy_batch(tiny, encode(tiny, PROMPTS), 10, watch=watch, on_step=calls.append)
    assert calls == [1, 2, 3]
