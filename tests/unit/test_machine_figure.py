"""One set of measured numbers per machine: the copy bandwidth and the matmul peak are probed once per server and
(machine, dtype), reused by the timing tab, its regime map and the quantization tab, replaced by Re-measure; every
sentence and legend that quotes "this machine's bandwidth" writes the same number the same way; and the
bandwidths a lesson measures on purpose (a decode step streaming float32 weights, one token's GEMVs) say what they
are, beside the machine's figure or with where to measure it.

No clock is read for real: the probes are replaced by counting fakes, the sweeps by empty ones."""

import re
from dataclasses import asdict
from types import SimpleNamespace

import pytest

from decoding.models import TINY
from decoding.timing import machine as machines
from decoding.timing import regimes as regimes_mod
from decoding.timing import sweeps
from decoding.timing.calculator import measured_row
from decoding.timing.limits import Probe
from decoding.timing.machine import MachineFigure, MachineFigures
from decoding.timing.regimes import SIZES, Point, RegimeMap, with_machine
from tests.helpers.made import FULL, KERNEL_ROWS, SPEED_ROWS, measured
from ui.context import AppConfig
from ui.events import CancelFlags
from ui.quantization import measure as q_measure
from ui.timing import regimes as panel
from ui.timing import tab as timing_tab
from visuals.machine import machine_gbs, machine_gflops
from visuals.quantization.kernels import kernels_said, kernels_table
from visuals.quantization.measured import speed_figure, streamed
from visuals.timing.captions import captions, headline
from visuals.timing.regimes import regime_caption, regime_figure
from visuals.timing.roofline import roofline_figure

CONFIG = AppConfig(TINY, "cpu")
PANEL = SimpleNamespace(plot="plot", note="note")  # the panel's two outputs, by name
QUIET = lambda *a, **k: None  # noqa: E731
GBS, TFLOPS = 12.3456, 0.0987  # odd digits: a figure rounded another way shows up


def figure(gbs: float = GBS, tflops: float = TFLOPS) -> MachineFigure:
    return MachineFigure(
        "a test CPU",
        "float32",
        Probe(gbs, "GB/s", [1.0], 1e9, "copy"),
        Probe(tflops, "TFLOP/s", [1.0], 1e9, "matmul"),
        at=0.0,
    )


@pytest.fixture
def probes(monkeypatch):
    """Counting fakes for the copy and the matmul, each call a new figure (10, 20 ... GB/s), and an empty store."""
    calls = {"copy": 0, "matmul": 0}

    def copy(device, dtype, mbytes, repeats, warmup, watch):
        calls["copy"] += 1
        return Probe(10.0 * calls["copy"], "GB/s", [1.0], 2.0 * mbytes * 2**20, "copy")

    def matmul(device, dtype, n, repeats, warmup, watch):
        calls["matmul"] += 1
        return Probe(0.1 * calls["matmul"], "TFLOP/s", [1.0], 2.0 * n**3, "matmul")

    monkeypatch.setattr(machines, "measure_bandwidth", copy)
    monkeypatch.setattr(machines, "measure_peak_flops", matmul)
    monkeypatch.setattr(machines, "MACHINE", MachineFigures())
    return calls


@pytest.fixture
def quick_sweeps(monkeypatch):
    """The timing measurement with its sweeps emptied (the machine's limits are what these tests follow)."""
    monkeypatch.setattr(sweeps, "context_sweep", lambda lm, plan, watch: ([], []))
    monkeypatch.setattr(sweeps, "cache_vs_nocache", lambda lm, plan, watch: (None, None))
    monkeypatch.setattr(sweeps, "batch_sweep", lambda lm, plan, watch: [])
    monkeypatch.setattr(sweeps, "_request", lambda lm, plan, watch: None)
    monkeypatch.setattr(timing_tab, "SHARED", type(timing_tab.SHARED)())


@pytest.fixture
def quick_map(monkeypatch):
    """The regime map with one size and no model built: its one point's MBU is read against the bandwidth given."""

    def time_path(lm, name, path, steps, warmup, bandwidth_gbs, watch):
        return Point(name, path, "random", 10**9, 25 * 10**7, [100.0], 100.0, 10.0 / bandwidth_gbs, None, "cpu", "f")

    monkeypatch.setattr(regimes_mod, "sizes_for", lambda device, bytes_per_param: ([SIZES[0]], []))
    monkeypatch.setattr(regimes_mod, "random_model", lambda size, dev, dt: None)
    monkeypatch.setattr(regimes_mod, "time_path", time_path)
    monkeypatch.setattr(panel, "SHARED", type(panel.SHARED)())


def test_the_store_keeps_one_figure_per_machine_and_dtype_and_the_last_kept_replaces_it():
    store = MachineFigures()
    assert store.get("a test CPU", "float32") is None
    first, second = figure(10.0), figure(20.0)
    store.keep("a test CPU", "float32", first)
    assert store.get("a test CPU", "float32") is first and store.get("a test CPU", "bfloat16") is None
    store.keep("a test CPU", "float32", None)  # nothing probed: nothing replaced
    assert store.get("a test CPU", "float32") is first
    store.keep("a test CPU", "float32", second)
    assert store.get("a test CPU", "float32") is second


def test_a_measurement_handed_the_kept_figure_probes_nothing(tiny, probes, quick_sweeps):
    m = sweeps.measure_all(tiny, timing_tab.PLANS["quick"], machine=figure())
    assert probes == {"copy": 0, "matmul": 0} and not m.machine_probed
    assert m.bandwidth.value == GBS and m.peak.value == TFLOPS
    fresh = sweeps.measure_all(tiny, timing_tab.PLANS["quick"])
    assert probes == {"copy": 1, "matmul": 1} and fresh.machine_probed and fresh.bandwidth.value == 10.0


def test_the_figure_is_probed_once_per_server_reused_everywhere_and_re_measure_replaces_it(
    tiny, probes, quick_sweeps, quick_map
):
    cancel = CancelFlags()
    first = timing_tab.measure(CONFIG, "quick", QUIET, None)
    assert probes == {"copy": 1, "matmul": 1}
    assert f"Memory bandwidth **{machine_gbs(10.0)}**" in first.summary and "(probed now)" in first.summary
    # the regime map, the other plan and the quantization tab read the kept figure: nothing probed again
    mapped = panel.shown(PANEL, panel.map_regimes(CONFIG, cancel, QUIET, None))
    other_plan = timing_tab.measure(CONFIG, "thorough", QUIET, None)
    assert probes == {"copy": 1, "matmul": 1}
    assert f"this machine's {machine_gbs(10.0)} copy bandwidth" in mapped["note"]
    assert f"Memory bandwidth **{machine_gbs(10.0)}**" in other_plan.summary
    assert re.search(r"\(probed at \d\d:\d\d\)", other_plan.summary)
    assert q_measure.machine_gbs(CONFIG) == 10.0
    # Re-measure probes again and replaces it: the kept map and the kept plan now quote the new figure
    again = timing_tab.measure(CONFIG, "quick", QUIET, None, again=True)
    assert probes == {"copy": 2, "matmul": 2}
    assert f"Memory bandwidth **{machine_gbs(20.0)}**" in again.summary
    remapped = panel.shown(PANEL, panel.map_regimes(CONFIG, cancel, QUIET, None))
    assert f"this machine's {machine_gbs(20.0)} copy bandwidth" in remapped["note"] and "50%" in remapped["note"]
    assert f"Memory bandwidth **{machine_gbs(20.0)}**" in timing_tab.measure(CONFIG, "thorough", QUIET, None).summary
    assert q_measure.machine_gbs(CONFIG) == 20.0
    # Re-map probes again too, and the timing tab's kept measurement follows it
    panel.map_regimes(CONFIG, cancel, QUIET, None, again=True)
    assert probes == {"copy": 3, "matmul": 3}
    assert f"Memory bandwidth **{machine_gbs(30.0)}**" in timing_tab.measure(CONFIG, "quick", QUIET, None).summary


def test_a_kept_map_read_against_a_new_figure_rescales_its_mbu_and_keeps_its_times():
    m = RegimeMap(
        "cpu", "a CPU", "float32", 10.0, [Point("s", "eager", "random", 1, 1, [5.0], 5.0, 0.5, None, "cpu", "f")]
    )
    assert with_machine(m, None) is m and with_machine(m, figure(10.0)) is m
    moved = with_machine(m, figure(20.0))
    assert moved.bandwidth_gbs == 20.0 and moved.points[0].mbu == 0.25 and moved.points[0].ms == [5.0]


def _quoted(text: str) -> list[str]:
    """Every 'N GB/s' figure in a text, as written."""
    return re.findall(r"\d+(?:\.\d+)? GB/s", text)


def test_every_place_that_shows_this_machines_bandwidth_quotes_the_same_number():
    kept = figure()
    same, peak = machine_gbs(kept.bandwidth_gbs), machine_gflops(kept.peak_tflops)
    assert same == "12.3 GB/s" and peak == "99 GFLOP/s"
    m = sweeps.with_machine(measured(**FULL), kept)
    shown = {
        "headline": headline(m),
        "roofline caption": captions(m)[0],
        "roofline legend": roofline_figure(
            [dict(phase="decode", x=1, intensity=0.5, flops_per_s=1e9, ms=1.0)], m.bandwidth.value, m.peak.value, ""
        )
        .data[0]
        .name,
        "calculator row": f"{measured_row(m).bandwidth_gbs} GB/s",
    }
    points = [asdict(Point("s", "eager", "random", 10**9, 1, [5.0], 5.0, 0.5, None, "cpu", "f"))]
    shown["regime legend"] = regime_figure(points, kept.bandwidth_gbs, "").data[0].name
    shown["regime caption"] = regime_caption(points, kept.bandwidth_gbs, [], False, "cpu")
    shown["quantization decode line"] = streamed(SPEED_ROWS, kept.bandwidth_gbs)
    shown["kernel table"] = kernels_table(KERNEL_ROWS, "a test CPU", kept.bandwidth_gbs)
    shown["kernel sentence"] = kernels_said(KERNEL_ROWS, kept.bandwidth_gbs)
    for where, text in shown.items():
        assert same in text, f"{where} does not quote {same}: {text}"
    # the ones about this machine's limits quote no other figure of it, rounded another way
    for where in ("headline", "roofline caption", "roofline legend", "regime legend", "regime caption"):
        assert set(_quoted(shown[where])) == {same}, where
    assert peak in shown["headline"] and peak in shown["roofline legend"]


def test_the_bandwidths_measured_on_purpose_say_what_they_are_beside_the_machines():
    beside = f"of this machine's {machine_gbs(GBS)} copy bandwidth"
    line = streamed(SPEED_ROWS, GBS)  # float32: 538 MB per step in 70 ms, 7.7 GB/s
    assert "float32 decode streamed its weights at 7.7 GB/s" in line and f"62% {beside}" in line
    assert "float32 decode streamed its weights" in speed_figure(SPEED_ROWS, "a test CPU").data[0].name
    said, table = kernels_said(KERNEL_ROWS, GBS), kernels_table(KERNEL_ROWS, "a test CPU", GBS)
    assert "**10.0 GB/s** in one token's GEMVs, 81% " + beside in said
    assert "not a copy" in table and f"81% {beside}" in table
    # no figure kept on this server yet: said, with where to measure it, and no number made up for it
    for text in (streamed(SPEED_ROWS, None), kernels_said(KERNEL_ROWS), kernels_table(KERNEL_ROWS, "a test CPU")):
        assert "not measured on this server yet" in text and "Prefill vs decode" in text
        assert "this machine's copy bandwidth" in text and "% of this machine's" not in text
