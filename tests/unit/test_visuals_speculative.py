"""The speculative figures and captions from hand-made rounds: what each shows, and that it says what happened."""

from dataclasses import replace

from decoding.speculative.baseline import Comparison, PlainResult
from decoding.speculative.records import (
    Check,
    Match,
    Round,
    SpecResult,
    acceptance_by_position,
    summary,
)
from visuals.speculative import charts as figs
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
    greedy = figs.verify_figure(a_round(accepted=1), greedy=True)
    assert [t.name for t in greedy.data][:2] == ["p: target", "q: draft"]
    assert list(greedy.data[2].text) == ["kept", "rejected", "not checked"]  # the argmax; not it; never looked at
    # the verdicts stay readable on a short bar: plotly would shrink them below 12 px to fit
    assert greedy.data[2].textfont.size == 12 and greedy.layout.uniformtext.minsize == 12
    sampled = figs.verify_figure(a_round(accepted=1, sampled=True), greedy=False)
    uniforms = [t for t in sampled.data if t.name and t.name.startswith("uniform")]
    assert list(uniforms[0].y) == [0.3, 0.3]  # drawn for the kept guess and the rejected one only


def test_decisive_figure_shows_the_residual_at_the_rejection():
    fig = figs.decisive_figure(a_round(accepted=1, sampled=True))
    assert "Position 2 (rejected here)" in fig.layout.title.text
    assert any(t.name.startswith("residual") for t in fig.data)


def test_run_figure_and_acceptance_by_position():
    rounds = [a_round(accepted=1), a_round(accepted=3)]
    by_pos = acceptance_by_position(rounds, 3)
    assert by_pos == [(2, 2), (1, 2), (1, 1)]  # the third guess was checked only when the second was kept
    fig = figs.run_figure(rounds, 3, by_pos)
    assert list(fig.data[-1].y) == [1.0, 0.5, 1.0]


def test_timeline_lays_segments_end_to_end_on_each_row():
    fig = figs.timeline_figure([a_round()], 50.0, 40.0, [10.0, 10.0])
    verify = next(t for t in fig.data if t.name == "verify pass")
    assert list(verify.base) == [51.0] and list(verify.x) == [20.0]
    plain = next(t for t in fig.data if t.name.startswith("plain"))
    assert list(plain.base) == [40.0, 50.0]


def test_captions_say_how_many_were_kept_and_the_measured_speedup_with_the_machine():
    text = round_caption(a_round(accepted=1), True)
    assert "1 of 3 kept" in text and "2 tokens for one pass" in text and "cropped back to 7" in text
    stats = summary([a_round(accepted=1)])
    assert "2.00 tokens per pass" in run_caption(stats, "")
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
