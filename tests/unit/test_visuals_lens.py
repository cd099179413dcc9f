"""The lens table and the agreement curve as pure functions of plain lens data."""

from types import SimpleNamespace

from decoding.lens import LayerLens
from tests.helpers.charts import read_chart
from visuals import lens as visuals
from visuals.glossary import term


def _lens() -> LayerLens:
    return LayerLens(
        top_ids=[[1, 2], [2, 3], [3, 2]],
        top_probs=[[0.9, 0.05], [0.5, 0.3], [0.8, 0.1]],
        top_texts=[["a", " b"], [" b", "<c>"], ["<c>", " b"]],
        final_prob=[0.0, 0.3, 0.8],
        final_id=3,
        ms=123.4,
        device="cpu",
        model="tiny",
        dtype="float32",
    )


def test_the_table_has_a_row_per_layer_named_from_the_embeddings_to_the_final_layer():
    out = visuals.lens_table_html(_lens())
    assert out.count("<tr") == 4  # the header and three rows
    assert "embeddings" in out and "layer 1" in out and "layer 2 (final)" in out


def test_each_cell_holds_its_exact_probability_and_the_final_choice_is_outlined_wherever_it_appears():
    out = visuals.lens_table_html(_lens())
    assert "data-p='0.8' data-id='3'" in out and out.count("tok lens-b") == 6
    assert out.count(" final'") == 2  # token 3 in layer 1's top and the final row


def test_token_text_is_escaped_and_its_space_made_visible():
    out = visuals.lens_table_html(_lens())
    assert "&lt;c&gt;" in out and "<c>" not in out and "␣b" in out


def test_the_marks_sit_beside_the_first_agreeing_row_and_the_first_with_half_the_final_probability():
    out = visuals.lens_table_html(_lens())
    row2 = out.split("data-row='2'")[1]
    assert visuals.FIRST in row2 and visuals.HALF in row2
    assert visuals.FIRST not in out.split("data-row='2'")[0].split("</thead>")[1]


def test_the_cost_line_names_the_measured_time_the_device_the_model_and_the_dtype():
    line = visuals.cost_line(_lens())
    assert "123</span> ms on this server's cpu (tiny, float32)" in line and "one extra pass" in line


def test_the_summary_names_the_rows_in_words():
    assert "first the top-1 at <b>layer 2 (final)</b>" in visuals.summary_line(_lens())


def test_the_summary_names_the_token_the_step_took_not_the_final_layers_top_1():
    forced = SimpleNamespace(token_id=2, token_text=" b", rank=2, forced=True)
    said = visuals.summary_line(_lens(), forced)
    assert said.startswith(
        "The step took <b>␣b</b> (forced, rank 2 in the final row; in the top 2 first at <b>embeddings</b>)"
    )
    assert f"not the final layer's {term('top-1')} <b>&lt;c&gt;</b>, which is first the top-1" in said
    greedy = SimpleNamespace(token_id=3, token_text="<c>", rank=1, forced=False)
    assert visuals.summary_line(_lens(), greedy).startswith(
        f"The step took <b>&lt;c&gt;</b>, the final layer's {term('top-1')}"
    )


def test_a_token_that_shows_nothing_is_named_by_its_id_and_tooltips_show_no_python_escapes():
    lens = _lens()
    lens.top_texts[0][0], lens.top_texts[1][1] = "\xa0", "\n"  # a no-break space reads as nothing
    out = visuals.lens_table_html(lens)
    assert "\\xa0" not in out and "\\n" not in out and "title='↵: 30.00% (the final layer" in out
    assert ">id 1 <small>" in out


def test_the_agreement_curve_has_a_point_per_layer_and_says_how_many_steps():
    drawn = visuals.agreement_figure([0.0, 0.5, 1.0], 2, exit_layer=1)
    fig = read_chart(drawn)
    assert fig.data[0].y == [0.0, 0.5, 1.0] and "2 steps" in fig.title
    assert fig.annotations == ["L = 1"] and "left:50.00%" in drawn  # the middle of layer 1's column, of 3
    assert "Step with this panel open" in visuals.agreement_figure([], 0)


def test_a_rounds_first_guess_shows_the_lens_at_l_beside_the_final_layer():
    from decoding.speculative.records import Check

    check = Check(0, 5, "x", 0.1, 0.7, 6, "y", None, False, top=[(5, "x", 0.1, 0.7), (6, "y", 0.8, 0.2)])
    out = visuals.exit_rows_html(check, 8, 30, greedy=True)
    assert "layer 8 (the draft: the lens at L)" in out and "layer 30 (final)" in out and "<b>rejected</b>" in out
    draft_row, final_row = out.split("<tr>")[1:]
    assert draft_row.index("data-id='5'") < draft_row.index("data-id='6'")  # the draft's order: by q
    assert final_row.index("data-id='6'") < final_row.index("data-id='5'")  # the final layer's: by p
    assert out.count(" final'") == 2  # the target's choice outlined in both rows
    assert out.count("(the target&#x27;s choice)") == 2  # its tooltip says what the outline means here


def test_over_a_run_first_guesses_kept_sit_beside_the_lens_agreement():
    line = visuals.first_guess_line(3, 3, 40, 8, greedy=True)
    assert "3 of 40 rounds (8%)" in line and "layer 8 picked the final token:</b> 3 of 40" in line
    assert "one event" in line and "one event" not in visuals.first_guess_line(3, 4, 40, 8, greedy=False)
    assert visuals.first_guess_line(0, 0, 0, 8, greedy=True) == ""


def test_the_whole_runs_curve_says_so_and_labels_the_final_layers_own_share():
    fig = read_chart(visuals.agreement_figure([0.0, 0.5, 0.75], 4, whole_run=True))
    assert "over the whole run (4 steps)" in fig.title
    assert fig.sub == "final layer: 75%"


def test_the_whole_runs_note_names_its_cost_and_why_its_top_end_is_below_one_when_the_run_sampled():
    from decoding.lens import RunAgreement

    sampled = RunAgreement([0.0, 0.5, 0.75], 4, 812.3, device="cpu", model="tiny", dtype="float32")
    note = visuals.run_curve_note(sampled)
    assert (
        "4 steps: one more pass over its text" in note and "812</span> ms on this server's cpu (tiny, float32)" in note
    )
    assert "75%: 1 written token the final layer did not rank first" in note
    greedy = RunAgreement([0.0, 1.0, 1.0], 1, 5.0)
    assert "1 step:" in visuals.run_curve_note(greedy) and "100%: every written token" in visuals.run_curve_note(greedy)
