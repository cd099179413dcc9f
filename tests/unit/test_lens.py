"""The logit lens: every layer's hidden state through the final norm and the LM head. Its last row is the model's
own distribution (the chart's, bit for bit), and its row L is the early-exit draft at L."""

import ast
from pathlib import Path

import pytest
import torch

from decoding import lens
from decoding.forward import forward_one
from decoding.loop import Run
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.speculative.drafts import first_layers
from decoding.speculative.records import EARLY_EXIT
from decoding.speculative.run import SpecRun

GREEDY = SamplerSettings(temperature=0)


def _run(lm, text="The cat sat on the mat. The cat", steps=3) -> Run:
    run = Run(lm, encode_prompt(lm.tokenizer, text, False, lm.context_length), max_new_tokens=16)
    run.prefill()
    for _ in range(steps):
        run.step(GREEDY)
    return run


def _lens_of(lm, ids):
    """The lens rows (L + 1, V) and the model's logits at the last of `ids`, from a fresh cache."""
    _, cache = forward_one(lm, ids[:-1], None, 0)
    logits, hidden, _ = lens.hidden_pass(lm, ids, cache)
    return lens.lens_logits(hidden, lens.final_norm(lm), lm.model.get_output_embeddings()), logits


def test_transformers_returns_layers_plus_one_hidden_rows_the_last_already_normed(tiny):
    ids = torch.tensor([[5, 6, 7, 8]], device=tiny.device)  # (1, T)
    with torch.inference_mode():
        out = tiny.model(input_ids=ids, output_hidden_states=True, logits_to_keep=1)
        last = out.hidden_states[-1][0, -1]  # (H,)
        assert len(out.hidden_states) == tiny.model.config.num_hidden_layers + 1
        assert torch.equal(tiny.model.lm_head(last), out.logits[0, -1])  # normed once, by the model
        assert not torch.equal(lens.final_norm(tiny)(last), last)  # a second norm would change it


def test_the_last_lens_row_is_the_models_logits(tiny):
    rows, logits = _lens_of(tiny, [3, 14, 15, 92, 65])
    torch.testing.assert_close(rows[-1], logits)
    assert int(torch.argmax(rows[-1])) == int(torch.argmax(logits))


def test_the_lens_at_l_is_the_early_exit_draft_at_l(tiny):
    ids = [3, 14, 15, 92, 65]
    rows, _ = _lens_of(tiny, ids)
    with first_layers(tiny, 1):
        draft, _ = forward_one(tiny, ids, None, 0)
    torch.testing.assert_close(rows[1], draft)
    assert int(torch.argmax(rows[1])) == int(torch.argmax(draft))


def test_a_lens_pass_gives_the_logits_a_plain_refeed_gives_bit_for_bit(tiny):
    run = _run(tiny)
    run.refeed()
    plain = run.logits.clone()
    seen = lens.lens_run(run)
    assert torch.equal(run.logits, plain)
    assert seen.layers == 2 and run.cache.get_seq_length() == len(run.ids)


def test_the_final_row_is_the_charts_distribution_bit_for_bit_and_the_step_chooses_from_it(tiny):
    run = _run(tiny)
    seen = lens.lens_run(run)
    shown = run.preview_step(GREEDY)  # what the chart draws
    by_id = {c.id: c.prob_before for c in shown.top}
    assert [by_id[t] for t in seen.top_ids[-1]] == seen.top_probs[-1]
    assert run.step(GREEDY).token_id == seen.final_id


def test_the_marks_name_the_first_agreeing_row_and_the_first_with_half_the_final_probability():
    seen = lens.LayerLens(
        top_ids=[[1, 2], [2, 1], [3, 2], [3, 2]],
        top_probs=[[0.5, 0.1], [0.3, 0.2], [0.4, 0.3], [0.8, 0.1]],
        top_texts=[["a", "b"]] * 4,
        final_prob=[0.0, 0.1, 0.4, 0.8],
        final_id=3,
        ms=0.0,
    )
    assert seen.first_agreeing() == 2 and seen.first_half() == 2
    seen.final_prob = [0.0, 0.5, 0.3, 0.8]
    assert seen.first_half() == 1


def test_agreement_is_the_share_of_steps_each_row_picks_the_chosen_token():
    a = lens.LayerLens([[1], [2], [3]], [[1.0]] * 3, [["x"]] * 3, [0, 0, 1], 3, 0.0)
    b = lens.LayerLens([[1], [3], [4]], [[1.0]] * 3, [["x"]] * 3, [0, 0, 1], 4, 0.0)
    assert lens.agreement([a, b], [3, 4]) == [0.0, 0.0, 1.0]
    assert lens.agreement([], []) == []


def test_a_run_with_nothing_pending_has_no_lens(tiny):
    run = Run(tiny, encode_prompt(tiny.tokenizer, "ab", False, tiny.context_length))
    with pytest.raises(ValueError, match="Prefill"):
        lens.lens_run(run)


@pytest.mark.parametrize("prompt", ["The cat sat on the mat. The cat sat", "1, 2, 3, 4, 5,"])
def test_in_greedy_rounds_the_first_guess_is_kept_exactly_when_the_lens_at_l_picks_the_final_token(tiny, prompt):
    ids = tiny.tokenizer.encode(prompt)
    spec = SpecRun(tiny, ids, GREEDY, source=EARLY_EXIT, draft_tokens=3, exit_layer=1, max_new_tokens=24)
    result = spec.run_to_end()
    for r in result.rounds:
        if not r.drafted:
            continue
        rows, logits = _lens_of(tiny, result.prompt_ids + result.token_ids[: r.context_len - len(ids)])
        agrees = int(torch.argmax(rows[1])) == int(torch.argmax(logits))
        assert agrees == (r.accepted > 0)
    kept, agreed, guessed = lens.first_guesses(result.rounds)
    assert kept == agreed and guessed > 0


def test_on_the_bundled_model_31_rows_the_last_the_chart_and_row_8_the_draft(bundled):
    run = _run(bundled, "The capital of France is", steps=1)
    seen = lens.lens_run(run)
    assert seen.layers == 30
    shown = run.preview_step(GREEDY)
    by_id = {c.id: c.prob_before for c in shown.top}
    assert [by_id[t] for t in seen.top_ids[-1]] == seen.top_probs[-1]
    rows, logits = _lens_of(bundled, run.ids)
    torch.testing.assert_close(rows[-1], logits, rtol=1e-4, atol=1e-3)
    assert int(torch.argmax(rows[-1])) == int(torch.argmax(logits))
    with first_layers(bundled, 8):
        draft, _ = forward_one(bundled, run.ids, None, 0)
    torch.testing.assert_close(rows[8], draft, rtol=1e-4, atol=1e-3)
    assert int(torch.argmax(rows[8])) == int(torch.argmax(draft))


def test_a_run_stepped_by_the_scheduler_reads_its_lens_in_a_pass_of_its_own(tiny):
    from decoding.serving.scheduler import scheduler_for

    run = Run(
        tiny, encode_prompt(tiny.tokenizer, "The cat sat", False, tiny.context_length), scheduler=scheduler_for(tiny)
    )
    run.prefill()
    run.step(GREEDY)
    seen = lens.lens_run(run)
    assert seen.layers == 2 and run.step(GREEDY).token_id == seen.final_id


def test_a_lens_pass_is_the_pass_the_step_reports(tiny):
    run = _run(tiny)
    seen = lens.lens_run(run)
    step = run.step(GREEDY)
    assert step.pass_mode == "lens" and 0 < step.forward_ms <= seen.ms  # the pass alone, without the head over rows


def test_over_a_run_each_row_is_read_at_the_position_before_each_written_token(tiny):
    run = _run(tiny, steps=5)
    prompt_len = len(run.prompt.ids)
    tops = lens.written_top1(tiny, run.ids, prompt_len)
    assert tops.shape == (3, 5)
    for i in range(5):  # column i: the lens of the run's text up to the token before step i's
        rows, _ = _lens_of(tiny, run.ids[: prompt_len + i])
        assert tops[:, i].tolist() == rows.argmax(dim=-1).tolist()


def test_over_a_greedy_run_the_final_rows_share_is_one_and_each_share_counts_its_rows_hits(tiny):
    run = _run(tiny, steps=6)
    seen = lens.run_agreement(tiny, run.ids, len(run.prompt.ids))
    tops = lens.written_top1(tiny, run.ids, len(run.prompt.ids))
    hits = [sum(t == w for t, w in zip(row, run.generated)) for row in tops.tolist()]
    assert seen.steps == 6 and seen.shares == [h / 6 for h in hits]
    assert seen.final_share == 1.0 and seen.model == tiny.label and seen.ms > 0


def test_a_sampled_or_forced_token_lowers_the_final_rows_share_below_one(tiny):
    run = _run(tiny, steps=2)
    final = lens.written_top1(tiny, run.ids + [0], len(run.prompt.ids))[-1, -1]
    forced = 1 if int(final) == 0 else 0  # a token the final layer did not pick
    run.step(GREEDY, force_id=forced)
    assert lens.run_agreement(tiny, run.ids, len(run.prompt.ids)).final_share == 2 / 3


def test_a_run_with_no_written_token_has_no_agreement(tiny):
    with pytest.raises(ValueError, match="Step first"):
        lens.run_agreement(tiny, [3, 14, 15], 3)


def test_on_the_bundled_model_one_pass_over_a_greedy_run_picks_every_token_the_steps_picked(bundled):
    """One pass over the whole text computes every position at once where the run went one by one: in float32
    they can differ in the last bits. Over these 30 greedy steps the final row's top-1 is the written token each
    time."""
    prompt = encode_prompt(bundled.tokenizer, "The history of the Roman Empire began", False, bundled.context_length)
    run = Run(bundled, prompt, max_new_tokens=30)
    run.prefill()
    while not run.done:
        run.step(GREEDY)
    tops = lens.written_top1(bundled, run.ids, len(run.prompt.ids))  # (31, N)
    assert tops.shape == (31, len(run.generated)) and tops[-1].tolist() == run.generated
    seen = lens.run_agreement(bundled, run.ids, len(run.prompt.ids))
    assert seen.final_share == 1.0 and seen.shares[0] < 1.0


def test_the_runs_lens_read_in_chunks_is_the_lens_read_at_once(tiny, monkeypatch):
    run = _run(tiny, steps=5)
    whole = lens.written_top1(tiny, run.ids, len(run.prompt.ids))
    monkeypatch.setattr(lens, "LOGITS_BYTES", 4 * 259 * 4)  # four rows of the tiny model's 259 logits per matmul
    assert torch.equal(lens.written_top1(tiny, run.ids, len(run.prompt.ids)), whole)


def test_the_lens_writes_no_field_of_a_run_it_asks_the_run_for_its_pass():
    tree = ast.parse((Path(__file__).resolve().parents[2] / "decoding" / "lens.py").read_text())
    targets = [t for node in ast.walk(tree) if isinstance(node, ast.Assign | ast.AugAssign) for t in _targets(node)]
    written = [ast.unparse(t) for t in targets if isinstance(t, ast.Attribute) and ast.unparse(t.value) == "run"]
    assert written == []


def _targets(node):
    for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
        yield from target.elts if isinstance(target, ast.Tuple) else [target]
