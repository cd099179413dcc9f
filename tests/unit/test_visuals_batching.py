"""Figures of the batching lab, drawn from hand-made rows: flips where they happened, zeros drawn as zeros."""

from decoding.nondeterminism.experiment import RowResult
from visuals.nondeterminism import batches as vis
from visuals.nondeterminism.tally import tally_figure

SOLO_TEXTS = [" upon", " a", " time", ",", " there", " lived"]
GAP = [2.0, 0.5, 0.1, 3.0, 1.0, 0.8]


def row(size: int, texts=SOLO_TEXTS, noise=None, first=None) -> RowResult:
    noise = noise if noise is not None else [0.0] * len(texts)
    agree = [first is None or i < first for i in range(len(texts))]
    return RowResult(
        batch_size=size,
        condition="padded",
        invariant=False,
        token_ids=list(range(len(texts))),
        token_texts=list(texts),
        text="".join(texts),
        noise=noise,
        gap=list(GAP),
        agree=agree,
        first_divergence=first,
        seconds=0.1,
    )


SOLO = row(1)
SAME = row(2, noise=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
# batch 8 flips at index 2 (" time" -> " moment"): gap 0.1 < 2 x 0.3; afterwards not compared
BRANCH = [" upon", " a", " moment", " ago", " the", " sea"]
FLIPPED = row(8, BRANCH, noise=[0.01, 0.02, 0.3, None, None, None], first=2)


def test_texts_highlight_the_first_divergent_token_and_strike_solos_continuation():
    page = vis.texts_html(SOLO, [SAME, FLIPPED])
    batch8 = page.split("batch 8")[1]
    flip = batch8.split('class="bl-flip"')[1].split("</span>")[0]
    assert flip.endswith(" moment") and "diverged at token 3" in batch8
    shared, branch = batch8.split('class="bl-shared"')[1], batch8.split('class="bl-branch"')[1]
    assert " a" in shared.split('class="bl-flip"')[0] and " moment" not in shared.split('class="bl-flip"')[0]
    assert " ago" in branch and " sea" in branch
    struck = batch8.split('class="bl-struck"')[1]
    assert " time" in struck and " lived" in struck and " ago" not in struck


def test_texts_badge_rows_identical_to_solo():
    page = vis.texts_html(SOLO, [SAME, FLIPPED])
    batch2 = page.split("batch 2")[1].split("batch 8")[0]
    assert "identical to solo" in batch2 and "bl-flip" not in batch2
    assert page.count("identical to solo") == 1 and "noise 0" in batch2  # bit-identical logits, not just tokens


def test_texts_escape_token_html():
    evil = row(1, ["<b>", " &", "\n"] + SOLO_TEXTS[3:])
    page = vis.texts_html(evil, [])
    assert "&lt;b&gt;" in page and "<b>" not in page
    assert "↵" in page


def test_texts_without_a_run_say_what_to_press():
    assert "Run" in vis.texts_html(None, [])


def test_scatter_marks_flips_exactly_at_the_first_divergence():
    fig = vis.scatter_figure([SAME, FLIPPED])
    stars = [t for t in fig.data if t.marker.symbol == "star"]
    assert len(stars) == 1 and list(stars[0].x) == [0.3] and list(stars[0].y) == [0.1]
    assert stars[0].y[0] < 2 * stars[0].x[0]  # a flip sits below the line gap = 2 x noise
    dashed = next(t for t in fig.data if "2 × noise" in (t.name or ""))
    assert all(abs(y - 2 * x) < 1e-12 for x, y in zip(dashed.x, dashed.y))


def test_scatter_leaves_out_steps_after_the_divergence():
    points = vis.scatter_points([FLIPPED])
    assert [p["step"] for p in points] == [0, 1, 2]
    assert [p["flip"] for p in points] == [False, False, True]
    assert [p["possible"] for p in points] == [False, False, True]  # gap <= 2 x noise only at the flip


def test_scatter_draws_exact_zero_noise_on_its_own_labelled_strip():
    fig = vis.scatter_figure([SAME, FLIPPED])
    xaxis = fig.layout.xaxis
    assert xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert xaxis.ticktext[0] == vis.ZERO_LABEL
    zero_x = xaxis.tickvals[0]
    batch2 = next(t for t in fig.data if t.name == "batch 2")
    assert set(batch2.x) == {zero_x} and zero_x < 0.01  # below every non-zero noise


def test_scatter_draws_an_exact_tie_on_its_own_labelled_strip():
    tied = row(4, BRANCH, noise=[0.01, 0.02, 0.3, None, None, None], first=2)
    tied.gap = [2.0, 0.5, 0.0, 3.0, 1.0, 0.8]  # solo's top two logits exactly equal at the flip
    fig = vis.scatter_figure([tied])
    star = next(t for t in fig.data if t.marker.symbol == "star")
    yaxis = fig.layout.yaxis
    assert yaxis.ticktext[0] == vis.TIE_LABEL and list(star.y) == [yaxis.tickvals[0]]
    assert 10 ** yaxis.range[0] < star.y[0] < 10 ** yaxis.range[1]  # on the chart, not clipped off
    dotted = vis.noise_figure(tied, [tied]).data[0]
    assert dotted.y[2] is None  # the half-gap line breaks at the tie instead of posing as bit-identical


def test_scatter_shows_the_line_even_when_the_noise_is_far_below_every_gap():
    quiet = row(2, noise=[3e-5, 5e-5, 4e-5, 2e-5, 1e-5, 3e-5])  # float32-sized noise, gaps 0.1 to 3
    fig = vis.scatter_figure([quiet])
    low = 10 ** fig.layout.yaxis.range[0]
    assert low < 2 * 1e-5  # the line gap = 2 x noise is on the chart, far below the points
    assert len(fig.layout.yaxis.tickvals) <= 8  # powers of ten only over many decades


def test_noise_line_ends_at_the_divergence_and_zeros_sit_on_the_bottom_line():
    fig = vis.noise_figure(SOLO, [SAME, FLIPPED])
    floor = fig.layout.yaxis.tickvals[0]
    assert fig.layout.yaxis.ticktext[0] == vis.ZERO_LABEL
    batch2 = next(t for t in fig.data if t.name == "batch 2")
    batch8 = next(t for t in fig.data if t.name == "batch 8")
    assert set(batch2.y) == {floor}
    assert list(batch8.y[:3]) == [0.01, 0.02, 0.3] and all(v is None for v in batch8.y[3:])
    star = next(t for t in fig.data if t.marker.symbol == "star")
    assert list(star.x) == [3] and list(star.y) == [0.3]


def test_empty_figures_say_what_to_press():
    for fig in (vis.noise_figure(None, []), vis.scatter_figure([]), tally_figure([])):
        assert not fig.data and "Press" in fig.layout.annotations[0].text


def test_tally_puts_the_most_common_completion_first_within_each_prompt():
    groups = [("Once", [("a cat sat.", 2), ("a cat ran away.", 7), ("a dog.", 1)]), ("Hi", [("hello", 3)])]
    fig = tally_figure(groups)
    first, second = fig.data
    assert list(first.x) == [7, 2, 1] and list(second.x) == [3]
    assert first.y[0].startswith("P1 #1") and "ran away" in first.customdata[0]
    assert fig.layout.yaxis.autorange == "reversed"  # first bar at the top
    assert len(set(first.y)) == 3
    assert "3 distinct in 10 runs" in fig.layout.annotations[0].text


def test_tally_labels_show_where_a_completion_leaves_the_most_common_one():
    common = "Once upon a time there was a little girl who lived by the sea with her grandmother."
    other = common[:60] + " and her dog."
    fig = tally_figure([("prompt", [(common, 5), (other, 1)])])
    assert "her dog" in fig.data[0].y[1] and fig.data[0].y[1].startswith("P1 #2 …")


def test_tally_hover_names_the_runs_behind_each_completion():

    groups = [("Once", [("a cat sat.", 1), ("a cat ran away.", 2)])]
    sources = [[[(4, "padded")], [(1, "solo"), (2, "same-length")]]]
    bar = tally_figure(groups, sources=sources).data[0]
    assert list(bar.x) == [2, 1]  # sorted with their runs
    assert bar.customdata[0].endswith("from: solo, batch 2 same-length")
    assert bar.customdata[1].endswith("from: batch 4 padded")
