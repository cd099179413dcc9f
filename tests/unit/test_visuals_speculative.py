"""The speculative figures and captions from hand-made rounds: what each shows, and that it says what happened."""

from dataclasses import replace

import pytest

from decoding.speculative.baseline import Comparison, PlainResult
from decoding.speculative.records import (
    Check,
    Match,
    Round,
    SpecResult,
    acceptance_by_position,
    summary,
)
from tests.helpers.charts import read_chart
from visuals.speculative import charts as figs
from visuals.speculative import views
from visuals.speculative.captions import round_caption, run_caption, speedup_caption
from visuals.speculative.round import round_html


def a_round(accepted=1, sampled=False) -> Round:
    """Three guesses ␣b ␣c ␣d copied from position 1; the first `accepted` kept, the next rejected."""
    checks = []
    for i, (tok, text) in enumerate([(11, " b"), (12, " c"), (13, " d")]):
        ok = None if i > accepted else i < accepted
        checks.append(
            Check(
                index=i,
                draft_id=tok,
                draft_text=text,
                p=0.6 if ok else 0.1,
                q=0.8 if sampled else 1.0,
                target_id=tok if ok else 20,
                target_text=text if ok else " x",
                uniform=0.3 if sampled and ok is not None else None,
                accepted=ok,
                top=[(tok, text, 0.6, 1.0), (20, " x", 0.3, 0.0)],
            )
        )
    checks.append(
        Check(
            index=3,
            draft_id=None,
            draft_text="",
            p=0.0,
            q=0.0,
            target_id=21,
            target_text=" y",
            uniform=None,
            accepted=None,
            top=[(21, " y", 0.9, 0.0)],
        )
    )
    return Round(
        index=0,
        source="prompt-lookup",
        context_len=6,
        drafted=[11, 12, 13],
        drafted_text=[" b", " c", " d"],
        accepted=accepted,
        bonus_id=20,
        bonus_text=" x",
        bonus_from="residual" if sampled else "argmax",
        checks=checks,
        residual=[(20, " x", 0.7)] if sampled else [],
        match=Match(0, 2, 2),
        kept=accepted + 1,
        cache_verified=9,
        cache_cropped=7,
        draft_ms=1.0,
        verify_ms=20.0,
        accept_ms=2.0,
    )


def test_round_html_marks_the_match_the_source_and_each_guess_verdict():
    out = round_html(["a", " b", " c", " d", "a", " b"], a_round(accepted=1))
    assert out.count("speculative-match") == 4  # the n-gram where it was found, and the same n-gram ending the context
    assert out.count("speculative-source") == 2  # the two tokens copied (positions 2, 3)
    assert "speculative-ok" in out and "speculative-no" in out and "speculative-skip" in out and "+1 target" in out


def test_verify_figure_draws_p_beside_q_and_the_uniform_when_sampling():
    greedy = read_chart(figs.verify_figure(a_round(accepted=1), greedy=True))
    assert greedy.names[:2] == ["p: target", "q: draft"]
    verdict = greedy.series("verdict")
    # the argmax; not it; never looked at: each verdict its word, its look and its mark under the bar
    assert [c[0] for c in verdict.customdata] == ["kept", "rejected", "not checked"]
    assert verdict.looks == ["solid", "outline", "pale"]
    assert [x for x in greedy.labels if x] == ["✓ 1: ␣b", "✗ 2: ␣c", "· 3: ␣d"]  # named once, under the verdicts
    assert {"kept", "rejected", "not checked"} <= set(greedy.legend)
    sampled = read_chart(figs.verify_figure(a_round(accepted=1, sampled=True), greedy=False))
    uniforms = sampled.series("uniform u (keep if below)")
    assert uniforms.y == [0.3, 0.3] and uniforms.x == ["1: ␣b", "2: ␣c"]  # the kept guess and the rejected one only
    chance = sampled.series("chance to keep")
    assert chance.y == pytest.approx([0.75, 0.125, 0.125])  # min(1, p/q) of each guess, in the columns of u


def test_decisive_figure_shows_the_residual_at_the_rejection():
    chart = read_chart(figs.decisive_figure(a_round(accepted=1, sampled=True)))
    assert "Position 2 (rejected here)" in chart.title
    assert any(name.startswith("residual") for name in chart.names)
    assert chart.series("p: target").x == ["␣c", "␣x"]


def test_run_figure_and_acceptance_by_position():
    rounds = [a_round(accepted=1), a_round(accepted=3)]
    by_pos = acceptance_by_position(rounds, 3)
    assert by_pos == [(2, 2), (1, 2), (1, 1)]  # the third guess was checked only when the second was kept
    positions = read_chart(figs.positions_figure(by_pos))
    assert positions.series("kept / checked").y == [1.0, 0.5, 1.0]
    assert positions.labels == ["1 (2/2)", "2 (1/2)", "3 (1/1)"]
    run = views.run_view(rounds, 3, by_pos, "caption")
    chart = read_chart(run.html)
    assert chart.series("guesses kept").y == [1, 3] and chart.series("target's own token").y == [1, 1]
    assert chart.series("guesses drafted").y == [3, 3]  # the dash at the guesses drafted
    assert chart.y_range == (0, 4)  # K + 1 for the whole run: a new round adds its column and nothing else


def test_timeline_lays_segments_end_to_end_on_each_row():
    chart = read_chart(figs.timeline_figure([a_round()], 50.0, 40.0, [10.0, 10.0]))
    verify = chart.series("verify pass")
    assert [c[0] for c in verify.customdata] == [51.0] and verify.y == [20.0] and verify.x == ["speculative"]
    plain = chart.series("plain decode pass (one token)")
    assert [c[0] for c in plain.customdata] == [40.0, 50.0] and plain.x == ["plain", "plain"]
    # each phase its look as well as its colour: side by side on one lane, they read apart without colour
    looks = {s.name: s.looks[0] for s in chart.data}
    assert looks["draft"] != looks["verify pass"] != looks["accept"]


def test_captions_say_how_many_were_kept_and_the_measured_speedup_with_the_machine():
    text = round_caption(a_round(accepted=1), True)
    assert "1 of 3 kept" in text and "2 tokens for one pass" in text and "cropped back to 7" in text
    stats = summary([a_round(accepted=1)])
    assert "2.00 tokens per pass" in run_caption(stats, "")
    assert "<b>" in text and "**" not in text  # HTML: the round's words sit in the round's patched view
    spec = SpecResult("prompt-lookup", 3, None, [1], token_ids=[11, 20], rounds=[a_round()], prefill_ms=10.0)
    cmp = Comparison(spec, PlainResult([11, 20], 10.0, [40.0, 40.0]))
    assert cmp.identical and abs(cmp.speedup - 90.0 / 33.0) < 1e-9
    assert "2.73×" in speedup_caption(cmp.to_dict(), "tiny, float32 on cpu") and "float32 on cpu" in speedup_caption(
        cmp.to_dict(), "tiny, float32 on cpu"
    )


def test_a_round_with_no_guess_gives_its_own_draft_sources_reason():
    empty = replace(a_round(accepted=0), drafted=[], checks=[])
    lookup = round_caption(empty, True)
    early = round_caption(empty, True, exit_layer=8)
    assert "no earlier occurrence" in lookup and "no earlier occurrence" not in early
    assert "max new tokens" in early
