"""The regime map on the page: its chart draws every size on each path beside the bytes ÷ bandwidth line, its
sentence says which bound each path follows, and its handler keeps one map per machine (Re-map takes a new one)."""

from dataclasses import asdict

from decoding.timing.regimes import Point, RegimeMap
from ui.context import AppConfig
from ui.events import CancelFlags
from ui.timing import regimes as panel
from visuals.timing.regimes import LINE_NAME, regime_caption, regime_figure

GB = 1_000_000_000


def _point(size: str, path: str, gb: float, ms: float, mbu: float) -> dict:
    return asdict(Point(size, path, "random", int(gb * GB), int(gb * GB / 4), [ms], ms, mbu, None, "cpu", "float32"))


# hand-made: the eager step grows with the bytes (10x the bytes, 9x the time); a captured one stays flat
BYTE_BOUND = [_point("small", "eager", 0.5, 50.0, 0.5), _point("big", "eager", 5.0, 450.0, 0.55)]
FLAT = [_point("small", "captured", 0.5, 20.0, 0.0), _point("big", "captured", 5.0, 24.0, 0.1)]
STATIC = [_point("small", "static", 0.5, 40.0, 0.0), _point("big", "static", 5.0, 420.0, 0.6)]


def test_the_figure_draws_each_size_on_each_path_beside_the_floor_line():
    fig = regime_figure(BYTE_BOUND + FLAT + STATIC, 20.0, "random weights · float32 · a CPU")
    names = [t.name for t in fig.data]
    assert names[0].startswith(LINE_NAME) and "20.0 GB/s" in names[0]
    line = fig.data[0]
    assert line.y[0] == 1e3 * line.x[0] * GB / (20.0 * GB)  # the floor: bytes ÷ bandwidth, in ms
    eager, static, captured = fig.data[1], fig.data[2], fig.data[3]
    assert list(eager.text) == ["small", "big"] and list(eager.y) == [50.0, 450.0] and list(eager.x) == [0.5, 5.0]
    assert list(captured.text) == ["small", "big"] and "captured" in captured.name
    # the static step's dots sit between the two at the same sizes: drawn, its names left to the eager dots above
    assert static.name.startswith("static") and list(static.y) == [40.0, 420.0] and "text" not in static.mode
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_no_points_draw_the_prompt_to_press():
    assert "Press Map the regimes" in regime_figure([], 0.0, "").to_json()


def test_the_sentence_names_the_bound_each_path_follows():
    said = regime_caption(
        BYTE_BOUND + FLAT, 20.0, ["A: measured on a GPU only", "B: measured on a GPU only"], False, "cuda"
    )
    assert "The eager step: 50.0 ms per token at small, 450.0 ms at big (10× the bytes, 9.0× the time" in said
    assert "its time follows the bytes, so the bytes bound it" in said
    assert "something else bounds it (launching its kernels one by one" in said
    assert said.endswith("Left out: A, B (measured on a GPU only).")
    split = regime_caption(BYTE_BOUND + STATIC + FLAT, 20.0, [], False, "cuda")
    # the captured step's gain over eager, split: the static cache's part, then the graph's
    assert (
        "At small the static cache alone makes a step 1.2× as fast as eager; capturing it as one graph, 2.0×" in split
    )
    assert "static cache alone" not in said  # no static dots: nothing to split
    assert "Cancelled" in regime_caption(BYTE_BOUND[:1], 20.0, [], True, "cpu")


def test_the_handler_keeps_one_map_per_machine_and_re_map_takes_a_new_one(monkeypatch, tiny):
    taken = []

    def fake_map(device, dtype, watch, machine=None):
        taken.append(dtype)
        return RegimeMap("cpu", "a CPU", dtype, 20.0, [Point(**p) for p in BYTE_BOUND], seconds=1.0)

    monkeypatch.setattr(panel, "regime_map", fake_map)
    monkeypatch.setattr(panel, "SHARED", type(panel.SHARED)())
    config, cancel = AppConfig("tiny-random", "cpu"), CancelFlags()
    first = panel.map_regimes(config, cancel, lambda *a, **k: None, None)
    assert panel.map_regimes(config, cancel, lambda *a, **k: None, None) is first and taken == ["float32"]
    assert panel.map_regimes(config, cancel, lambda *a, **k: None, None, again=True) is not first
    assert taken == ["float32", "float32"]
