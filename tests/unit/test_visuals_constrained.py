"""The constrained lesson's figures and tables, from hand-made steps and samples (no model)."""

from dataclasses import replace

from decoding.constrained.engines import Outcome
from decoding.constrained.kinds import Constraint
from decoding.constrained.measure import Comparison, Sample
from decoding.pipeline import SamplerSettings
from decoding.trace import Candidate, Step
from tests.helpers.charts import read_chart
from visuals.constrained.views import (
    answer_html,
    comparison_figure,
    comparison_markdown,
    mask_rows_html,
    orders_html,
    step_view,
    token_origins,
)
from visuals.distribution import distribution_figure
from visuals.glossary import term
from visuals.parts import changes
from visuals.theme import REMOVED


def _step(index=0, token="yes", forced=False, **kw) -> Step:
    top = [
        Candidate(id=1, text="Yes", logit=2.0, prob_before=0.6, prob_after=0.0, removed_by="grammar"),
        Candidate(id=2, text="yes", logit=1.0, prob_before=0.3, prob_after=1.0, removed_by=None),
    ]
    fields = dict(
        index=index,
        phase="decode",
        token_id=2,
        token_text=token,
        prob_before=0.3,
        prob_after=1.0,
        rank=2,
        forced=False,
        top=top,
        stages=[("grammar", 2)],
        kept_mass=0.3,
        entropy_bits=1.0,
        settings={},
        forward_ms=50.0,
        sample_ms=0.1,
        kv_bytes=0,
        context_len=5,
        allowed=2,
        illegal_mass=0.7,
    )
    if forced:
        fields |= dict(
            phase="grammar",
            top=[Candidate(id=3, text=token, logit=0.0, prob_before=0.0, prob_after=1.0)],
            grammar_forced=True,
            allowed=1,
        )
    return Step(**{**fields, **kw})


def test_the_grammar_row_names_what_it_removed_and_the_illegal_mass():
    rows = mask_rows_html(_step(), vocab_size=100)
    assert "<b>grammar</b>: 2 of 100 legal" in rows and "<code>Yes</code> 60.0%" in rows
    assert f"{term('illegal mass')} 70.0%" in rows


def test_a_forced_step_says_the_model_was_not_asked():
    assert "forced by the grammar" in mask_rows_html(_step(forced=True, token="}"), 100)


def test_forced_and_resampled_tokens_are_marked_in_the_answer():
    html = answer_html([_step(resampled_from=1), _step(1, "}", forced=True)])
    assert html.count("dashed #882255") == 2 and "↺" in html and "forced by the grammar" in html


def test_a_step_appends_its_tokens_to_the_answer_and_replaces_the_rest():
    one = step_view("1 token", [_step()], "", "chart 1", "rows 1")
    two = step_view("2 tokens", [_step(), _step(1, "}", forced=True)], "", "chart 1", "rows 2")
    ops = changes(one, two)
    appended = [op for op in ops if op[0] == "append"]
    assert [op[1] for op in appended] == ["#constrained-answer .chips"] and "forced by the grammar" in appended[0][2]
    assert ["html", "#constrained-rows", "rows 2"] in ops and not any(op[1] == "#constrained-chart" for op in ops)


def test_the_bars_the_grammar_removed_have_its_own_colour_and_name():
    fig = read_chart(distribution_figure(_step()))
    removed = next(s for s in fig.data if s.name.startswith("removed by grammar"))
    assert removed.colours == [REMOVED["grammar"]]


def test_each_token_is_counted_once_as_sampled_forced_by_the_grammar_or_typed_by_you():
    steps = [_step(0), _step(1, "}", forced=True), _step(2, "{", forced=True), replace(_step(3, "x"), forced=True)]
    assert token_origins(steps) == "1 sampled, 2 forced by the grammar, 1 typed by you (Force)"
    assert token_origins([_step(0, "{", forced=True)]) == "0 sampled, 1 forced by the grammar"


def test_the_orders_table_names_the_position_it_looks_at():
    outcome = Outcome("vllm", ("grammar", "top_k"), ("grammar",), 10, 2, "none needed")
    said = orders_html([outcome], "top-k 0", position=4)
    assert "for the next token, position 4 of the answer" in said and "(top-k 0)" in said


def test_orders_flag_the_engine_whose_truncation_left_nothing_legal():
    outcomes = [
        Outcome(
            engine="llama.cpp",
            order=("top_k", "grammar"),
            enabled=("top_k", "grammar"),
            truncated=1,
            legal_left=0,
            recovery="resample",
        )
    ]
    assert "<b>0: nothing legal</b>" in orders_html(outcomes, "top-k 1")


def test_the_comparison_counts_valid_answers_and_says_when_the_favourite_was_illegal():
    cmp = Comparison(Constraint("choices", "yes\nno"), SamplerSettings())
    cmp.unconstrained = [
        Sample(seed=0, text="No.", problem="not one of", logprob=-1.0, tokens=3, forced=0, stop_reason="eos"),
        Sample(seed=1, text="no", problem=None, logprob=-3.0, tokens=2, forced=0, stop_reason="eos"),
    ]
    cmp.constrained = [
        Sample(seed=0, text="no", problem=None, logprob=-3.0, tokens=2, forced=1, stop_reason="eos"),
        Sample(seed=1, text="yes", problem=None, logprob=-4.0, tokens=2, forced=1, stop_reason="eos"),
    ]
    cmp.mask_ms, cmp.forward_ms, cmp.calls_saved = [0.2, 0.4], [50.0, 70.0], 2
    md = comparison_markdown(cmp)
    assert "**1 of 2** | **2 of 2**" in md and "most likely text was illegal" in md and "0.5%" in md
    assert len(comparison_figure(cmp).data) == 3  # without: valid, invalid; with: valid
