"""The repetition chart, the highlighted texts and the sentences, on hand-made summary rows."""

from decoding.beams.repeats import RepeatLoop
from visuals.beams.repetition import findings_markdown, loop_label, repetition_figure, texts_html


def row(key="greedy", label="greedy", rep4=0.5, loop=None, runs=1, sampled=False, **extra):
    tokens = ["The", " cat", " sat", ".", " The", " cat", " sat", "."]
    return {
        "key": key,
        "label": label,
        "sampled": sampled,
        "runs": runs,
        "rep3": rep4 + 0.05,
        "rep4": rep4,
        "rep3_range": (rep4, rep4 + 0.1),
        "rep4_range": (rep4 - 0.05, rep4 + 0.05),
        "loop": loop,
        "looped_runs": int(loop is not None),
        "reuse": 0.5,
        "words": {},
        "tokens": tokens,
        "mask": [False] * 4 + [True] * 4,
        "stop_reason": "max_new_tokens",
        **extra,
    }


def test_empty_rows_give_a_figure_that_says_what_to_do():
    fig = repetition_figure([])
    assert "Run" in fig.layout.annotations[0].text


def test_one_bar_per_setting_for_each_ngram_size_in_percent():
    fig = repetition_figure([row(), row("temperature", "temperature 1.0", 0.02, sampled=True)])
    assert [t.name for t in fig.data] == ["repeated 3-grams", "repeated 4-grams"]
    assert list(fig.data[1].y) == [50.0, 2.0]
    assert list(fig.data[1].x) == ["greedy", "temperature 1.0"]


def test_whiskers_only_when_several_seeds_ran():
    assert not repetition_figure([row()]).data[0].error_y.visible
    assert repetition_figure([row(runs=3)]).data[0].error_y.visible


def test_loop_start_is_annotated_one_based():
    fig = repetition_figure([row(loop=RepeatLoop(36, 12, 100)), row("top_p", "top-p 0.9")])
    texts = [a.text for a in fig.layout.annotations]
    assert texts == ["loop from<br>token 37", "no loop"]


def test_loop_label_counts_looped_seeds():
    assert "1/3 seeds looped" in loop_label(row(loop=RepeatLoop(0, 4, 8), runs=3))


def test_texts_mark_repeated_spans_and_the_loop_start():
    out = texts_html([row(loop=RepeatLoop(4, 4, 8))])
    assert out.count('<mark class="rep"') == 2  # the legend's sample and one span
    assert out.index("⟳ loop</span> The") < out.index("</mark></div>")
    assert "loop from token <b>5</b>" in out


def test_texts_escape_token_text():
    r = row()
    r["tokens"] = ["<b>", "&"] + r["tokens"][2:]
    out = texts_html([r])
    assert "&lt;b&gt;" in out and "&amp;" in out


def test_findings_check_the_greedy_claim_against_the_numbers():
    rows = [row(rep4=0.6, loop=RepeatLoop(36, 12, 100)), row("temperature", "temperature 1.0", 0.03, sampled=True)]
    text = findings_markdown(rows)
    assert "**greedy** repeated 60% of its 4-grams and looped from token 37" in text
    assert "claim holds here" in text
    reversed_rows = [row(rep4=0.01), row("temperature", "temperature 1.0", 0.2, sampled=True)]
    assert "does **not** hold" in findings_markdown(reversed_rows)
    no_loop = [row(rep4=0.05), row("temperature", "temperature 1.0", 0.01, sampled=True)]
    assert "did not fall into a loop" in findings_markdown(no_loop)
    tie = [row(rep4=0.0), row("temperature", "temperature 1.0", 0.0, sampled=True)]
    assert "no difference" in findings_markdown(tie)


def test_findings_count_the_words_that_should_repeat():
    rows = [row(words={"Mia": 9}), row("repetition_big", "repetition 2.0", 0.0, words={"Mia": 1}, reuse=0.2)]
    text = findings_markdown(rows, ("Mia",))
    assert "“Mia” ×1 (greedy ×9)" in text and "20% of the tokens" in text
