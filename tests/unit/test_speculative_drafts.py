"""The drafts: prompt lookup's n-gram rule (transformers' PromptLookupCandidateGenerator), and early exit as the
model's first L layers, then its own final norm and LM head."""

import pytest
import torch

from decoding.pipeline import SamplerSettings
from decoding.speculative.drafts import EarlyExit, check_exit_layer, first_layers, layer_count, lookup


def test_lookup_proposes_what_followed_the_first_earlier_occurrence_of_the_last_two_tokens():
    ids = [5, 6, 7, 8, 9, 1, 6, 7, 2, 3, 6, 7]
    got = lookup(ids, 3)
    assert got.tokens == [8, 9, 1]
    assert (got.match.start, got.match.size, got.match.follow) == (1, 2, 3)


def test_lookup_falls_back_to_one_token_and_stops_at_the_end_of_the_context():
    got = lookup([4, 9, 5, 9], 5)  # no earlier (5, 9); the first earlier 9 is followed by 5, 9
    assert got.tokens == [5, 9] and got.match.size == 1


def test_lookup_without_a_match_proposes_nothing():
    assert lookup([1, 2, 3, 4], 4).tokens == []
    assert lookup([7], 4).tokens == []


def test_lookup_cuts_its_proposal_before_an_end_of_sequence_token():
    assert lookup([1, 2, 3, 0, 4, 1, 2], 4, eos_ids=(0,)).tokens == [3]
    # the first match ends in the end token at once: nothing to propose, as transformers does
    assert lookup([1, 2, 0, 1, 2, 5, 1, 2], 4, eos_ids=(0,)).tokens == []


def test_early_exit_logits_equal_the_hidden_state_after_layer_l_through_the_final_norm_and_head(tiny):
    ids = torch.tensor([[3, 14, 15, 92, 65]])  # (1, T)
    with torch.inference_mode():
        out = tiny.model(ids, output_hidden_states=True)
        ref = tiny.model.lm_head(tiny.model.model.norm(out.hidden_states[1]))[0, -1]  # (V,)
        with first_layers(tiny, 1):
            cut = tiny.model(ids).logits[0, -1]
    torch.testing.assert_close(cut, ref)
    assert tiny.model.config.num_hidden_layers == 2  # restored


def test_the_layer_count_does_not_change_while_a_draft_runs(tiny):
    with first_layers(tiny, 1):
        assert layer_count(tiny) == 2 and check_exit_layer(tiny, 1) == 1


def test_the_model_gets_all_its_layers_back_even_when_the_draft_fails(tiny):
    with pytest.raises(RuntimeError), first_layers(tiny, 1):
        raise RuntimeError("boom")
    assert tiny.model.config.num_hidden_layers == 2


def test_early_exit_greedy_draft_is_the_cut_models_argmax_chain(tiny):
    draft = EarlyExit(tiny, 1)
    ids = [10, 20, 30, 40]
    got = draft.propose(ids, 3, SamplerSettings(temperature=0), None, len(ids))
    ctx = list(ids)
    with torch.inference_mode(), first_layers(tiny, 1):
        for t in got.tokens:
            assert t == int(tiny.model(torch.tensor([ctx])).logits[0, -1].argmax())
            ctx.append(t)
    assert got.passes == 3 and len(got.q) == 3


@pytest.mark.parametrize("bad", [0, -1, 2, 30, 1.5, True, None])
def test_exit_layer_outside_1_to_layers_minus_1_is_refused_with_the_range(tiny, bad):
    with pytest.raises(ValueError, match=r"exit layer L must be a whole number in \[1, 1\]"):
        check_exit_layer(tiny, bad)
