"""The beam search laid out as a tree, before any drawing: one node per scored candidate, children grouped
under their parent with no crossings, and each node's status (on a live beam, a finished hypothesis, the
answer, died out, or pruned). Reads `decoding.beams.records.BeamStep`; `visuals.beams.search` draws the result."""

from dataclasses import dataclass, field

MAX_ROWS_WITH_OUTSIDERS = 16  # above this many nodes a column drops the best-outside-the-pool candidates


@dataclass
class Node:
    col: int  # the step (0-based); the prompt is column -1
    token_id: int
    token: str
    logprob: float  # of this token after its beam
    score: float  # cumulative log-prob of the path
    fate: str  # running, finished, pruned (as recorded)
    rank: int
    parent: int | None  # index of the parent node (None: the prompt)
    path: list[str] = field(default_factory=list)  # token texts from the first generated token to this one
    status: str = "pruned"  # live, dead, finished, dropped, best, pruned (what the figure draws)
    y: float = 0.0
    hyp_score: float | None = None  # length-penalised score, for finished hypotheses


def tree_nodes(steps, length_penalty: float = 1.0, done: bool = False, outsiders: bool | None = None) -> list[Node]:
    """Lay the recorded steps out as nodes: children grouped under their parent, parents in order, no crossings."""
    nodes: list[Node] = []
    slot_node: dict[int, int | None] = {0: None}  # live slot -> its node (None = the prompt)
    order: dict[int | None, int] = {None: 0}  # node -> its row order in its column
    if outsiders is None:
        outsiders = all(len(s.candidates) <= MAX_ROWS_WITH_OUTSIDERS for s in steps)
    for step in steps:
        cands = [c for c in step.candidates if outsiders or c.rank >= 0]
        cands.sort(key=lambda c: (order.get(slot_node.get(c.parent), 0), -c.score))
        next_slots = {}
        for row, c in enumerate(cands):
            parent = slot_node.get(c.parent)
            path = (nodes[parent].path if parent is not None else []) + [c.token_text]
            node = Node(
                col=step.index,
                token_id=c.token_id,
                token=c.token_text,
                logprob=c.logprob,
                score=c.score,
                fate=c.fate,
                rank=c.rank,
                parent=parent,
                path=path,
            )
            node.y = -(row - (len(cands) - 1) / 2)
            if c.fate == "finished":
                node.hyp_score = c.score / (len(path) ** length_penalty)
            nodes.append(node)
            order[len(nodes) - 1] = row
            if c.fate == "running":
                next_slots[c.next_slot] = len(nodes) - 1
        slot_node = next_slots
    _mark(nodes, steps, slot_node, done)
    return nodes


def _mark(nodes: list[Node], steps, live: dict[int, int], done: bool) -> None:
    """Status of every node: on a live path, on a finished hypothesis' path, the best, or dead."""
    hyps = steps[-1].finished if steps else []
    best = steps[-1].finished[0] if done and steps and steps[-1].finished else None
    for n in nodes:
        n.status = "pruned" if n.fate == "pruned" else "dead"
    finished = [i for i, n in enumerate(nodes) if n.fate == "finished"]
    for i in finished:
        nodes[i].status = "finished" if any(_is(nodes[i], h) for h in hyps) else "dropped"
    for i in live.values():
        _paint_ancestors(nodes, i, "live")
    for i in finished:
        if nodes[i].status == "finished":
            _paint_ancestors(nodes, nodes[i].parent, "live")
    if best is not None:
        tip = next((i for i in finished if nodes[i].status == "finished" and _is(nodes[i], best)), None)
        if tip is not None:
            nodes[tip].status = "best"
            _paint_ancestors(nodes, nodes[tip].parent, "best")


def _is(node: Node, hyp) -> bool:
    # a finished node is the hypothesis that ended at its step with its last token and its score
    return hyp.step == node.col and hyp.token_ids[-1] == node.token_id and hyp.logprob == node.score


def _paint_ancestors(nodes: list[Node], i: int | None, status: str) -> None:
    while i is not None:
        if nodes[i].status != "best":
            nodes[i].status = status
        i = nodes[i].parent
