"""The model call: float32 last-position logits, a batch of rows, the one rewind of a KV cache, its bytes."""

import torch
from transformers import DynamicCache

from decoding.forward import empty_cache, filled_cache, forward, forward_one, kv_cache_bytes, rewind
from decoding.prompts import encode_prompt


def _ids(tiny) -> list[int]:
    return encode_prompt(tiny.tokenizer, "Tell me a story.", chat=True).ids


def test_forward_returns_float32_last_position_logits(tiny):
    logits, cache = forward_one(tiny, _ids(tiny), None, 0)
    assert logits.shape == (tiny.vocab_size,) and logits.dtype == torch.float32
    assert cache.get_seq_length() == len(_ids(tiny)) and kv_cache_bytes(cache) > 0
    assert kv_cache_bytes(None) == 0


def test_forward_takes_a_batch_of_rows_and_gives_one_logit_row_each(tiny):
    ids = torch.tensor([_ids(tiny), _ids(tiny)])  # (2, T)
    logits, cache = forward(tiny, ids, None, 0)
    assert logits.shape == (2, tiny.vocab_size) and logits.dtype == torch.float32
    assert torch.allclose(logits[0], forward_one(tiny, _ids(tiny), None, 0)[0])


def test_rewind_keeps_the_first_positions_and_the_logits_match_a_fresh_pass(tiny):
    ids = _ids(tiny)
    _, cache = forward_one(tiny, ids, None, 0)
    rewind(cache, len(ids) - 2)
    assert cache.get_seq_length() == len(ids) - 2
    again, cache = forward_one(tiny, ids[-2:], cache, len(ids) - 2)
    assert torch.allclose(again, forward_one(tiny, ids, None, 0)[0], atol=1e-5)


def test_rewind_to_a_length_the_cache_does_not_exceed_changes_nothing(tiny):
    ids = _ids(tiny)
    _, cache = forward_one(tiny, ids, None, 0)
    rewind(cache, len(ids) + 3)
    assert cache.get_seq_length() == len(ids)


def test_an_empty_cache_is_new_each_time_and_like_one_made_from_the_config(tiny):
    config = tiny.model.config
    first, second = empty_cache(config), empty_cache(config)
    assert first is not second and not {id(x) for x in first.layers} & {id(x) for x in second.layers}
    made = DynamicCache(config=config)
    assert [type(x) for x in first.layers] == [type(x) for x in made.layers]
    _, first = forward_one(tiny, [1, 2, 3], first, 0)  # filling one leaves the other empty
    assert first.get_seq_length() == 3 and second.get_seq_length() == 0 and empty_cache(config).get_seq_length() == 0


def test_a_filled_cache_is_what_updating_an_empty_one_makes_and_decodes_the_same(tiny):
    """decoding.forward.filled_cache sets a plain layer's fields itself (the prefix cache's copies): it must leave the
    layer as transformers' own update does, field for field, should a later transformers add or rename one."""
    ids = _ids(tiny)
    logits, cache = forward_one(tiny, ids, None, 0)
    layers = [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers]
    updated = empty_cache(tiny.model.config)
    for index, (keys, values) in enumerate(layers):
        updated.update(keys, values, index)
    filled = filled_cache(tiny.model.config, layers)
    assert filled.layers[0].keys is layers[0][0], "taken as given, not copied again"
    for mine, theirs in zip(filled.layers, updated.layers, strict=True):
        assert type(mine) is type(theirs) and vars(mine).keys() == vars(theirs).keys()
        for name, value in vars(theirs).items():
            if isinstance(value, torch.Tensor):
                assert torch.equal(getattr(mine, name), value), name
            else:
                assert getattr(mine, name) == value, name
    token = [int(logits.argmax())]
    assert torch.equal(forward_one(tiny, token, filled, len(ids))[0], forward_one(tiny, token, updated, len(ids))[0])
