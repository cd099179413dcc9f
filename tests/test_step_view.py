"""The step tab's side panels: each strategy alone is drawn from the pending logits of the session's own run."""

import plotly.graph_objects as go

from decoding.models import TINY
from decoding.pipeline import SamplerSettings
from decoding.sandbox import each_strategy_alone
from ui import step_handlers as h
from ui import step_view
from ui.context import RAW, AppConfig
from ui.sessions import STORE
from visuals.distribution import MODES

CONFIG = AppConfig(model_id=TINY, device="cpu")
KNOBS = [0.7, 5, 0.9, 0.05, 1.0, 0.0, 0.0, "transformers"]


def test_strategies_panel_follows_the_pending_logits(tiny):
    run_id = h.prefill(CONFIG, None, TINY, "hello", RAW, 0, 4, "", MODES[0], *KNOBS)[-1]
    settings = h.settings_from(*KNOBS)
    _, _, before = step_view.side_view(run_id, settings)
    h.step(run_id, MODES[0], *KNOBS)
    _, _, after = step_view.side_view(run_id, settings)
    assert isinstance(before, go.Figure) and isinstance(after, go.Figure)
    expected = each_strategy_alone(STORE.get(run_id).run.logits, settings, step_view.TOP_N)
    kept = [r.kept for r in expected]
    assert [r.name for r in expected] == ["greedy", "temperature", "top_k", "top_p", "min_p"]
    assert kept[0] == 1 and kept[2] >= 5  # greedy keeps one; top-k keeps k (and ties)
    titles = [a.text for a in after.layout.annotations if "keeps" in (a.text or "")]
    assert [f"keeps {n:,} " in t for n, t in zip(kept, titles)] == [True] * len(kept)
    STORE.release(run_id)


def test_no_run_gives_blank_panels():
    pen, time_fig, strategies = step_view.side_view(None, SamplerSettings())
    assert all(isinstance(f, go.Figure) for f in (pen, time_fig, strategies))
