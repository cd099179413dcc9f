"""The weights' layout (decoding.layout): the same values either way, the choice measured at load and kept by a
clear lead only, and the lab's steps token-equal to generate() in whichever layout the model runs."""

import pytest
import torch

from decoding import layout
from decoding.loop import run_to_end
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.quantization.model import quantize_model
from tests.helpers.fidelity import generate_ids


def test_a_transposed_weight_holds_the_same_values_in_the_other_order():
    w = torch.randn(6, 4)  # (out, in)
    t = layout.transposed(w)
    assert torch.equal(t, w) and t.shape == w.shape
    assert w.stride() == (4, 1) and t.stride() == (1, 6)  # (in, out) rows underneath
    assert layout.transposed(t).data_ptr() == t.data_ptr()  # already so: nothing moves


def test_lay_out_moves_every_linear_and_its_tied_embedding_and_back(tiny):
    model = tiny.model
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    before = [m.weight.detach().clone() for m in linears]
    tied = model.get_input_embeddings().weight is model.get_output_embeddings().weight
    try:
        layout.lay_out(model, layout.TRANSPOSED)
        assert all(m.weight.stride() == (1, m.out_features) for m in linears)
        assert all(torch.equal(m.weight, b) for m, b in zip(linears, before))
        if tied:
            assert model.get_input_embeddings().weight is model.get_output_embeddings().weight
    finally:
        layout.lay_out(model, layout.AS_LOADED)
    assert all(m.weight.is_contiguous() and torch.equal(m.weight, b) for m, b in zip(linears, before))


def test_an_unknown_layout_is_refused_with_the_two_it_can_be(tiny):
    with pytest.raises(ValueError, match=r"\(out, in\) or \(in, out\), got 'rows'"):
        layout.lay_out(tiny.model, "rows")


def test_a_small_model_keeps_its_layout_without_timing_it(tiny):
    assert layout.choose(tiny.model) == layout.AS_LOADED
    assert tiny.weight_layout == layout.AS_LOADED


def test_a_layout_set_by_name_is_kept_without_timing_and_a_bad_name_is_refused(tiny):
    assert layout.choose(tiny.model, "transposed") == layout.TRANSPOSED
    assert layout.choose(tiny.model, "as-loaded") == layout.AS_LOADED
    with pytest.raises(ValueError, match="DECODING_LAB_WEIGHT_LAYOUT must be one of auto, as-loaded, transposed"):
        layout.choose(tiny.model, "fast")


def test_the_choice_needs_a_clear_lead():
    assert layout.pick({layout.AS_LOADED: 1.0, layout.TRANSPOSED: 0.9}) == layout.AS_LOADED  # 90%: no lead
    assert layout.pick({layout.AS_LOADED: 1.0, layout.TRANSPOSED: 0.8}) == layout.TRANSPOSED
    assert layout.pick({layout.AS_LOADED: 0.5, layout.TRANSPOSED: 1.0}) == layout.AS_LOADED


def test_both_layouts_are_timed_on_the_same_values():
    seconds = layout.timed(torch.randn(64, 32))
    assert set(seconds) == {layout.AS_LOADED, layout.TRANSPOSED} and all(s > 0 for s in seconds.values())


@pytest.mark.bundled
def test_the_bundled_model_in_its_chosen_layout_writes_what_generate_writes(bundled):
    prompt = encode_prompt(bundled.tokenizer, "The capital of France is", chat=False)
    settings = SamplerSettings(temperature=0.8, top_p=0.9)
    assert run_to_end(bundled, prompt, settings, seed=3, max_new_tokens=16).token_ids == generate_ids(
        bundled, prompt, settings, 3, 16
    )
    head = bundled.model.get_output_embeddings()
    expected = (1, head.out_features) if bundled.weight_layout == layout.TRANSPOSED else (head.in_features, 1)
    assert head.weight.stride() == expected


@pytest.mark.bundled
def test_weights_rounded_to_the_same_values_keep_the_layout_and_so_the_pass_to_the_bit(bundled):
    # "as stored" rounds the bundled file's weights to their own grids: no value changes, and in the float32
    # weights' layout the pass is the float32 pass exactly
    stored = quantize_model(bundled.model, "as stored")
    ids = torch.tensor([encode_prompt(bundled.tokenizer, "Hello there", chat=False).ids])  # (1, T)
    with torch.inference_mode():
        assert torch.equal(stored(input_ids=ids).logits, bundled.model(input_ids=ids).logits)
