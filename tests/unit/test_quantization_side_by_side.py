"""The side-by-side run: float32 against float32 is the same stream with KL 0; a rounded copy is compared on
float32's own text and its own greedy stream is kept beside it; Back undoes a step in all three runs. The tiny model
for the rules, the bundled one for a few real steps."""

import torch

from decoding.forward import forward_one
from decoding.prompts import encode_prompt
from decoding.quantization.copies import Copies
from decoding.quantization.side_by_side import SideBySide, compare_step, tally


def pair(lm, quantized, n: int, text: str = "hello world, the"):
    prompt = encode_prompt(lm.tokenizer, text, chat=False)
    run = SideBySide(lm, quantized, prompt, max_new_tokens=32)
    run.prefill()
    for _ in range(n):
        run.step()
    return run


def test_identical_logits_have_kl_zero_no_change_and_the_same_top1():
    logits = torch.tensor([2.0, 1.0, 0.5, -1.0])
    m = compare_step(logits, logits.clone(), top=3)
    assert m["kl"] == 0 and m["delta_p"] == 0 and m["same_top1"]
    assert m["top_ids"] == (0, 1, 2) and m["p_reference"] == m["p_format"]


def test_the_shown_tokens_are_the_union_of_both_tops_ordered_by_the_reference():
    ref, fmt = torch.tensor([3.0, 2.0, 0.0, -5.0]), torch.tensor([0.0, 1.0, 0.0, 6.0])
    m = compare_step(ref, fmt, top=2)
    assert m["top_ids"] == (0, 1) and not m["same_top1"] and m["kl"] > 0
    assert m["delta_p"] < 0  # the format gives float32's token less
    p = torch.softmax(ref.double(), -1)
    assert abs(m["gap"] - (p[0] - p[1]).item()) < 1e-12


def test_float32_against_itself_is_one_stream_with_kl_zero(tiny):
    run = pair(tiny, tiny, 6)
    assert all(s.kl == 0 and s.same_top1 and s.own == s.reference for s in run.steps)
    assert run.first_divergence() is None and run.reference.ids == run.own.ids
    t = tally(run.steps)
    assert (t.steps, t.same_top1, t.kl_mean) == (6, 6, 0.0)


def test_the_reference_is_greedy_on_the_projects_own_forward(tiny):
    run = pair(tiny, tiny, 4)
    ids = list(run.reference.prompt.ids)
    logits, cache = forward_one(tiny, ids, None, 0)
    for s in run.steps:
        assert s.reference == int(logits.argmax())
        ids.append(s.reference)
        logits, cache = forward_one(tiny, [s.reference], cache, len(ids) - 1)


def test_the_format_is_compared_on_the_references_text_and_back_undoes_all_three(tiny):
    quantized = Copies(keep=1).get(tiny, "int4")
    run = pair(tiny, quantized, 5)
    assert run.same_context.ids == run.reference.ids  # fed float32's tokens, whatever it would have chosen
    assert run.own.generated == [s.own for s in run.steps]
    run.back()
    assert len(run.steps) == 4 and len(run.reference.generated) == len(run.own.generated) == 4


def test_the_copies_keep_at_most_their_number_least_recently_used_first(tiny):
    copies = Copies(keep=2)
    assert copies.get(tiny, "float32") is tiny
    a = copies.get(tiny, "int8")
    copies.get(tiny, "int4")
    assert copies.get(tiny, "int8") is a  # kept, and now the most recent
    copies.get(tiny, "bfloat16")
    assert copies.names() == ["int8", "bfloat16"]


def test_on_the_bundled_model_int8_keeps_the_top_token_with_a_small_kl(bundled):
    run = pair(bundled, Copies(keep=1).get(bundled, "int8"), 4, "The capital of France is")
    assert all(s.same_top1 for s in run.steps)
    assert tally(run.steps).kl_mean < 0.05


def test_on_the_bundled_model_float32_against_itself_is_token_equal(bundled):
    run = pair(bundled, bundled, 3, "The capital of France is")
    assert run.own.generated == run.reference.generated and tally(run.steps).kl_max == 0
