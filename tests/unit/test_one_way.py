"""One way into a run: every forward pass of a Run goes through `Run._pass`, and `Run._install` is the only place a
run's logits, cache and last pass are set, whatever ran the pass: an eager pass of its own, the scheduler's solo,
packed and alone passes and its prefix cache, the static step, the lens, a pass fed to several runs at once, a
prefill shared by many runs. Each pass names the implementation that computed it (transformers' modules or the
TorchScript copy) and where its logits came from; and decoding/ calls the model only where MODEL_CALLS allows."""

import ast
import sys
import threading
from pathlib import Path

import pytest

from decoding import lens
from decoding.loop import Run, prefill_once
from decoding.passes import KINDS, MODES, Pass
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.serving import ragged, scripted
from decoding.serving.ragged import feed_together
from decoding.serving.scheduler import Scheduler
from decoding.static import can_capture
from decoding.timing import regimes
from visuals.serving.traffic import pass_caption

FIELDS = ("logits", "cache", "last_pass")
GREEDY, SAMPLED = SamplerSettings(temperature=0), SamplerSettings()
ROOT = Path(__file__).resolve().parents[2]
# every way a pass reaches a run through its `_pass`, as (kind, mode, implementation, origin): decoding.passes' words
EVERY_PATH = {
    ("eager", "solo", "modules", "computed"),  # a run's own eager pass
    ("eager", "lens", "modules", "computed"),
    ("static", "solo", "modules", "computed"),
    ("eager", "packed", "scripted", "computed"),  # the scheduler's packed pass, in TorchScript
    ("eager", "solo", "scripted", "computed"),  # the scheduler's solo decode row, in TorchScript
    ("eager", "alone", "modules", "computed"),
    ("eager", "cached", "modules", "pool"),  # the prefix cache's whole prompt; its first pass was the modules'
    ("eager", "prefix", "modules", "computed"),
}


class Ways:
    """What the runs took in: every pass `_pass` ran, every install as (where it came from, kind, mode, whether it
    holds a distribution), and every field of a run set outside `_install`."""

    def __init__(self):
        self.ran, self.installed, self.stray, self.passes = [], [], [], []
        self.installing = threading.local()


@pytest.fixture()
def ways(monkeypatch):
    seen, one_pass, install = Ways(), Run._pass, Run._install

    def passing(run, *args, **kwargs):
        passed = one_pass(run, *args, **kwargs)
        seen.ran.append(passed)
        return passed

    def installing(run, passed):
        came = "_pass" if any(passed is p for p in seen.ran) else sys._getframe(1).f_code.co_name
        seen.installed.append((came, passed.passed.kind, passed.passed.mode, passed.logits is not None))
        seen.passes.append((came, passed.passed))
        seen.installing.now = True
        try:
            install(run, passed)
        finally:
            seen.installing.now = False

    def setting(run, name, value):
        if name in FIELDS and not getattr(seen.installing, "now", False):
            seen.stray.append(name)
        object.__setattr__(run, name, value)

    monkeypatch.setattr(Run, "_pass", passing)
    monkeypatch.setattr(Run, "_install", installing)
    monkeypatch.setattr(Run, "__setattr__", setting)
    return seen


def _own_passes(tiny, prompt):
    """An eager run: prefill, steps, Back (the last position again), the lens's pass, Back to the start; a static
    run; two runs from one shared prefill, fed together in one packed pass."""
    run = Run(tiny, prompt, max_new_tokens=8)
    run.prefill()
    run.step(GREEDY)
    run.step(GREEDY)
    run.back()
    lens.lens_run(run)
    run.step(GREEDY)
    for _ in range(2):
        run.back()
    static = Run(tiny, prompt, path="static", max_new_tokens=4)
    static.prefill()
    static.step(GREEDY)
    shared = prefill_once(tiny, prompt.ids)
    pair = [Run(tiny, prompt, seed=seed, max_new_tokens=4) for seed in (1, 2)]
    for one in pair:
        one.prefill(shared)
        one.step(SAMPLED, feed=False)
    feed_together(tiny, pair)


def _step_together(runs, steps):
    barrier = threading.Barrier(len(runs))

    def student(run):
        barrier.wait()
        for _ in range(steps):
            run.step(GREEDY)

    threads = [threading.Thread(target=student, args=(run,)) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)


def _scheduled_passes(tiny, texts):
    """Runs through one scheduler: a prompt alone on the server (solo), the same prompt again (cached), one that starts
    the same way (prefix), one that asks to run alone; then three stepping at once (packed), and one stepping with
    nobody else (the solo decode row)."""
    scheduler = Scheduler(tiny, chunk_tokens=8)
    prompts = [encode_prompt(tiny.tokenizer, text, chat=True) for text in texts]
    runs = [Run(tiny, p, max_new_tokens=8, scheduler=scheduler) for p in (prompts[0], prompts[0], prompts[1])]
    for run in runs:
        run.prefill()
    alone = Run(tiny, prompts[0], max_new_tokens=2, scheduler=scheduler, alone=True)
    alone.prefill()
    alone.step(GREEDY)
    _step_together(runs, 6)
    runs[0].step(GREEDY)  # a step with nobody else stepping: the scheduler's solo decode row


def test_every_pass_of_a_run_goes_through_its_one_pass_and_lands_through_its_one_install(tiny, ways):
    prompt = encode_prompt(tiny.tokenizer, "Tell me a story.", chat=True)
    _own_passes(tiny, prompt)
    _scheduled_passes(tiny, ("Tell me a story about a cat.", "Tell me a story about a dog, please."))
    assert ways.stray == []  # nothing set a run's logits, cache or last pass but `_install`
    assert {(p.passed.kind, p.passed.mode, p.passed.impl, p.passed.origin) for p in ways.ran} == EVERY_PATH
    # the passes run for several runs name theirs too: the packed pass fed together, the prefill shared by many
    given_passes = {(came, p.mode, p.impl, p.origin) for came, p in ways.passes if came in ("fed", "prefill")}
    assert given_passes == {("fed", "packed", "scripted", "computed"), ("prefill", "cached", "modules", "shared")}
    # a distribution to choose from came from the run's own pass, from a pass the caller ran for several runs at once
    # (packed), or from a prefill run once for many (cached); everything else installed holds none
    given = {(came, mode) for came, kind, mode, pending in ways.installed if pending and came != "_pass"}
    assert given == {("fed", "packed"), ("prefill", "cached")}
    assert {came for came, *_, pending in ways.installed if not pending} == {"__init__", "_spend", "refeed"}


def _serving_runs(tiny, scheduler, texts):
    runs = [
        Run(tiny, encode_prompt(tiny.tokenizer, t, chat=True), max_new_tokens=8, scheduler=scheduler) for t in texts
    ]
    for run in runs:
        run.prefill()
    return runs


TEXTS = ("Tell me a story about a cat.", "Tell me a story about a dog, please.", "Name three colours.")


def test_a_packed_pass_of_the_modules_is_named_so_and_the_step_line_says_which_ran(tiny, monkeypatch):
    monkeypatch.setattr(scripted, "fits", lambda lm, caches: False)  # a model the TorchScript copy does not fit
    runs = _serving_runs(tiny, Scheduler(tiny, chunk_tokens=8), TEXTS)
    _step_together(runs, 6)
    steps = [step for run in runs for step in run.trace.steps]
    packed = [step for step in steps if step.pass_mode == "packed"]
    assert packed and {step.pass_impl for step in steps} == {"modules"}
    line = pass_caption(packed[0].rows, 1.0, "packed", None, impl=packed[0].pass_impl, origin=packed[0].pass_origin)
    assert line.endswith("run by transformers' Llama modules")
    assert pass_caption(1, 1.0, "solo", None, impl="scripted").endswith(
        "the TorchScript copy of those modules (bit for bit the same)"
    )


def test_a_row_computed_again_after_a_failed_packed_pass_says_it_was_a_fallback(tiny, monkeypatch):
    def failing(lm, segments, scripted=True):
        raise RuntimeError("a packed pass that fails (test)")

    monkeypatch.setattr(ragged, "packed_pass", failing)
    runs = _serving_runs(tiny, Scheduler(tiny, chunk_tokens=8), TEXTS)
    _step_together(runs, 6)
    steps = [step for run in runs for step in run.trace.steps]
    assert {step.pass_mode for step in steps} <= {"solo", "cached", "prefix"}  # no packed pass ever answered
    fallback = [step for step in steps if step.pass_origin == "fallback"]
    assert fallback, "no row was packed with another: the race did not happen"
    assert all(step.pass_mode == "solo" for step in fallback)
    line = pass_caption(1, 2.0, "solo", None, impl=fallback[0].pass_impl, origin="fallback")
    assert line.startswith("computed alone: the packed pass it was in failed")


def _run_classes(trees) -> set[str]:
    """Run and every class that derives from it, across the modules read."""
    found, classes = {"Run"}, [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    while True:
        more = {c.name for c in classes if any(ast.unparse(b).split(".")[-1] in found for b in c.bases)} - found
        if not more:
            return found
        found |= more


def _assigned(node) -> list:
    """The attributes an assignment writes (each of a tuple's), none for any other node."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
    flat = [t for target in targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
    return [t for t in flat if isinstance(t, ast.Attribute)]


def _field_writes(node, runs: set[str], where=("", "")):
    """Every assignment to a run's logits, cache or last_pass, as (class.function, target): the object is `self` in
    a run class, or any object named like a run (`run`, `entry.run`)."""
    for child in ast.iter_child_nodes(node):
        inside = (child.name, "") if isinstance(child, ast.ClassDef) else where
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            inside = (where[0], child.name)
        for t in _assigned(child):
            owner = ast.unparse(t.value)
            if t.attr in FIELDS and ((owner == "self" and where[0] in runs) or owner.endswith("run")):
                yield ".".join(where), ast.unparse(t)
        yield from _field_writes(child, runs, inside)


def test_no_code_but_install_sets_a_runs_logits_cache_or_last_pass():
    paths = sorted(p for folder in ("decoding", "ui", "bench") for p in (ROOT / folder).rglob("*.py"))
    trees = {str(p.relative_to(ROOT)): ast.parse(p.read_text(), str(p)) for p in paths}
    runs = _run_classes(trees.values())
    assert {"Run", "ConstrainedRun"} <= runs
    writes = {(path, where, target) for path, tree in trees.items() for where, target in _field_writes(tree, runs)}
    installs = {("decoding/loop.py", "Run._install", f"self.{name}") for name in FIELDS}
    assert writes == installs


def test_one_vocabulary_names_a_pass_in_the_run_the_regime_map_and_the_step_line(tiny):
    assert regimes.PATHS == KINDS
    for kind in KINDS:  # every kind a run's path, every pair a line under the step
        if kind != "captured" or can_capture(tiny.device):
            assert Run(tiny, encode_prompt(tiny.tokenizer, "hi", chat=False), path=kind).path == kind
        assert all(pass_caption(2, 3.0, mode, 1e-5, kind=kind) for mode in MODES)
    with pytest.raises(
        ValueError, match="mode must be one of solo, packed, alone, lens, cached, prefix, got 'batched'"
    ):
        Pass(1.0, mode="batched")
    with pytest.raises(ValueError, match="kind must be one of eager, static, captured, got 'dynamic'"):
        Pass(1.0, kind="dynamic")
    with pytest.raises(ValueError, match="implementation must be one of modules, scripted, got 'compiled'"):
        Pass(1.0, impl="compiled")
    with pytest.raises(ValueError, match="origin must be one of computed, fallback, pool, in flight, shared, got 'x'"):
        Pass(1.0, origin="x")
    with pytest.raises(ValueError, match="path must be one of eager, static, captured, got 'dynamic'"):
        Run(tiny, encode_prompt(tiny.tokenizer, "hi", chat=False), path="dynamic")


# every place in decoding/ that calls the model itself, and why it cannot go through decoding.forward: any new call
# fails below, named. A pass that can go through `forward` (or `forward_positions`, `forward_hidden`) goes through it.
MODEL_CALLS = {
    ("decoding/forward.py", "forward_positions"): "the eager pass: `forward`, `forward_one` and every loop's step",
    ("decoding/forward.py", "forward_hidden"): "the eager pass with every layer's hidden state (the logit lens)",
    ("decoding/static.py", "StaticStep._one"): "the static cache's step: no mask or positions from the host, so a "
    "CUDA graph can capture it",
    ("decoding/serving/ragged.py", "packed_pass"): "the modules' packed pass: many sessions' tokens in one row, "
    "their caches behind a ragged view, no mask",
    ("decoding/serving/scripted.py", "packed_forward"): "the same packed pass in TorchScript, the model's layers "
    "written out op for op (it starts at the embedding, not at model())",
    ("decoding/nondeterminism/batched_decode.py", "_decode"): "the nondeterminism lesson's point: a left-padded batch "
    "with its own positions and padding mask, as generate() pads one",
    ("decoding/models.py", "warm_up"): "at load, before any lesson: a model not yet wrapped in a LoadedModel",
    ("decoding/quantization/quality.py", "_logits"): "a quantized copy of the model, never the shared one: no cache",
    ("decoding/quantization/smooth.py", "activation_maxima"): "a copy of the model with hooks reading each layer's "
    "activations: no cache, no logits",
}


def _model_calls(tree):
    """Every call into a model in a module, as (class.function, line): `model(...)`, `lm.model(...)`,
    `….model.forward(...)`, or a model's embedding called by hand (a pass written out layer by layer)."""
    found, where = [], []

    def visit(node):
        named = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        if named:
            where.append(node.name)
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            forward_of_model = (
                name == "forward" and isinstance(f, ast.Attribute) and ast.unparse(f.value).endswith("model")
            )
            if name in ("model", "embed_tokens") or forward_of_model:
                found.append((".".join(where), node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)
        if named:
            where.pop()

    visit(tree)
    return found


def test_every_call_into_the_model_in_decoding_is_one_of_the_allowed_few():
    sites = {}
    for path in sorted((ROOT / "decoding").rglob("*.py")):
        module = str(path.relative_to(ROOT))
        for where, line in _model_calls(ast.parse(path.read_text(), module)):
            sites.setdefault((module, where), []).append(line)
    new = sorted(
        f"{module}:{lines[0]} in {where}"
        for (module, where), lines in sites.items()
        if (module, where) not in MODEL_CALLS
    )
    assert not new, f"a call into the model outside decoding.forward and the allowed table: {new}"
    gone = sorted(set(MODEL_CALLS) - set(sites))
    assert not gone, f"allowed model calls that no longer exist (drop them from MODEL_CALLS): {gone}"
