"""The beam tree and the greedy-vs-beam comparison, on hand-made search records."""

from decoding.beams.records import BeamCandidate, BeamStep, Hypothesis
from decoding.beams.scoring import Scored
from visuals.beams.search import beam_tree_figure, beams_markdown, compare_figure, compare_markdown
from visuals.beams.tree import tree_nodes

EOS = 0


def cand(parent, token_id, text, logprob, score, rank, fate, next_slot=-1):
    return BeamCandidate(
        parent=parent,
        token_id=token_id,
        token_text=text,
        logprob=logprob,
        score=score,
        rank=rank,
        fate=fate,
        next_slot=next_slot,
    )


# two beams. step 1: " a" and " the" run on, "<end>" ranks third (not among the first two, so it cannot finish).
# step 2: " the"+"<end>" finishes; " a"+" cat" and " the"+" dog" run on; " a"+" <b>" is pruned.
STEP1 = BeamStep(
    0,
    [([], 0.0)],
    [
        cand(0, 1, " a", -0.5, -0.5, 0, "running", 0),
        cand(0, 2, " the", -1.0, -1.0, 1, "running", 1),
        cand(0, EOS, "<end>", -2.0, -2.0, 2, "pruned"),
        cand(0, 3, " x", -3.0, -3.0, 3, "pruned"),
        cand(0, 9, " far", -6.0, -6.0, -1, "pruned"),
    ],
    [],
)
HYP = Hypothesis([2, EOS], -1.2, -0.6, 1)
STEP2 = BeamStep(
    1,
    [([1], -0.5), ([2], -1.0)],
    [
        cand(1, EOS, "<end>", -0.2, -1.2, 0, "finished"),
        cand(0, 4, " cat", -0.9, -1.4, 1, "running", 0),
        cand(1, 5, " dog", -0.6, -1.6, 2, "running", 1),
        cand(0, 6, " <b>", -2.0, -2.5, 3, "pruned"),
    ],
    [HYP],
)


def test_children_sit_under_their_parents_path():
    nodes = tree_nodes([STEP1, STEP2])
    by_text = {("".join(n.path), n.col): n for n in nodes}
    assert by_text[(" the<end>", 1)].parent == nodes.index(by_text[(" the", 0)])
    assert by_text[(" a cat", 1)].parent == nodes.index(by_text[(" a", 0)])
    assert by_text[(" the dog", 1)].score == -1.6


def test_paths_to_live_beams_are_live_pruned_stay_pruned_finished_are_marked():
    nodes = {("".join(n.path), n.col): n for n in tree_nodes([STEP1, STEP2], length_penalty=1.0)}
    assert nodes[(" a", 0)].status == "live" and nodes[(" the", 0)].status == "live"
    assert nodes[(" a cat", 1)].status == "live" and nodes[(" the dog", 1)].status == "live"
    assert nodes[("<end>", 0)].status == "pruned" and nodes[(" a <b>", 1)].status == "pruned"
    finished = nodes[(" the<end>", 1)]
    assert finished.status == "finished" and finished.hyp_score == -1.2 / 2**1.0


def test_when_done_the_best_hypothesis_and_its_path_are_the_answer():
    nodes = {("".join(n.path), n.col): n for n in tree_nodes([STEP1, STEP2], done=True)}
    assert nodes[(" the<end>", 1)].status == "best" and nodes[(" the", 0)].status == "best"
    assert nodes[(" a", 0)].status == "live"


def test_a_beam_with_no_surviving_child_dies_out():
    step2 = BeamStep(
        1,
        STEP2.beams,
        [c if c.parent == 1 else cand(0, 6, " <b>", -2, -2.5, 3, "pruned") for c in STEP2.candidates],
        [HYP],
    )
    nodes = {("".join(n.path), n.col): n for n in tree_nodes([STEP1, step2])}
    assert nodes[(" a", 0)].status == "dead"


def test_rows_of_a_column_do_not_overlap_and_are_centred():
    nodes = tree_nodes([STEP1, STEP2])
    for col in (0, 1):
        ys = sorted(n.y for n in nodes if n.col == col)
        assert len(set(ys)) == len(ys) and abs(sum(ys)) < 1e-9


def test_figure_names_every_status_in_the_legend_and_escapes_token_text():
    fig = beam_tree_figure([STEP1, STEP2], done=True)
    names = {t.name for t in fig.data if t.showlegend is not False and t.name}
    assert {"the answer", "live beam", "pruned"} <= names
    labels = " ".join(t for trace in fig.data if trace.text for t in trace.text)
    assert "&lt;b&gt;" in labels and "<b>" not in labels.replace("<br>", "")
    assert "◆-0.60" in labels  # the finished hypothesis shows its length-penalised score


def test_empty_search_draws_only_the_prompt():
    assert len(beam_tree_figure([]).data) == 1
    assert "press **Step**" in beams_markdown([])


def test_table_lists_live_beams_best_first_and_the_finished_set():
    md = beams_markdown([STEP1, STEP2], length_penalty=1.0)
    live = md.split("**Finished")[0]
    assert live.index("a cat") < live.index("the dog")
    assert "| 1 |  the&lt;end&gt; | 2 | -1.200 | -0.6000 |" in md


def scored(ids, logprobs, text):
    return Scored(ids, text, [f"t{i}" for i in ids], logprobs)


def test_comparison_says_which_sequence_is_more_probable():
    greedy, beam = scored([1, 2], [-0.1, -3.0], "greedy text"), scored([3, 4], [-0.5, -0.5], "beam text")
    md = compare_markdown(greedy, beam)
    assert "Beam search found a more probable sequence" in md and "2.10 nats" in md
    assert "same sequence" in compare_markdown(greedy, greedy)
    assert "Greedy's sequence is more probable" in compare_markdown(beam, greedy)


def test_comparison_figure_plots_cumulative_log_probability():
    fig = compare_figure(scored([1, 2], [-0.1, -3.0], "g"), scored([3, 4], [-0.5, -0.5], "b"))
    assert list(fig.data[0].y) == [-0.1, -3.1] and list(fig.data[1].y) == [-0.5, -1.0]
    assert fig.data[0].name == "greedy: -3.10"


def _long_search(steps: int, finish_at: int) -> list[BeamStep]:
    """One beam for `steps` steps, with a hypothesis that finishes at step `finish_at` and stays the best."""
    out, hyps, score = [], [], 0.0
    for i in range(steps):
        cands = [
            cand(0, 10 + i, f" w{i}", -0.1, score - 0.1, 0, "running", 0),
            cand(0, 3, " x", -5, score - 5, 2, "pruned"),
        ]
        if i == finish_at:
            cands.insert(0, cand(0, EOS, "<end>", -0.05, score - 0.05, 1, "finished"))
            hyps = [Hypothesis([EOS], score - 0.05, (score - 0.05) / (i + 1), i)]
        out.append(BeamStep(i, [([], score)], cands, list(hyps)))
        score -= 0.1
    return out


def test_a_long_tree_opens_on_its_answer_and_scrolls_with_a_range_slider():
    fig = beam_tree_figure(_long_search(20, finish_at=4), done=True)
    assert fig.layout.xaxis.rangeslider.visible and list(fig.layout.xaxis.rangeslider.range) == [-1.1, 20.6]
    left, right = fig.layout.xaxis.range
    answer = next(t for t in fig.data if t.name == "the answer")
    assert left < min(answer.x) and max(answer.x) < right <= max(answer.x) + 1, "the answer's last node is in view"
    assert right - left <= 9, "a few steps at a time, each wide enough for its labels"
    assert fig.layout.width is None, "the figure fills its box"


def test_a_long_tree_still_searching_opens_on_its_newest_step():
    fig = beam_tree_figure(_long_search(20, finish_at=25))
    assert fig.layout.xaxis.range[1] == 20.6


def test_a_short_tree_shows_every_step_without_a_slider():
    fig = beam_tree_figure(_long_search(6, finish_at=2), done=True)
    assert not fig.layout.xaxis.rangeslider.visible and list(fig.layout.xaxis.range) == [-1.1, 6.6]
