"""The tick log summarises the server's own traffic: batch sizes, tokens per second, time per pass by size."""

from decoding.serving.traffic import Tick, TickLog, summary


def tick(at, rows, ms=50.0, decode=None, prefill=0, mode="packed"):
    return Tick(
        at=at, ms=ms, rows=rows, decode_rows=rows if decode is None else decode, prefill_tokens=prefill, mode=mode
    )


def test_summary_counts_tokens_sizes_and_time_per_pass():
    ticks = [tick(0, 1, 40), tick(1, 4, 60), tick(2, 4, 70, decode=3, prefill=64), tick(3, 8, 100)]
    s = summary(ticks, window_s=10)
    assert s["ticks"] == 4
    assert s["decode_tokens"] == 1 + 4 + 3 + 8
    assert s["prefill_tokens"] == 64
    assert s["tokens_per_s"] == 16 / 10
    assert s["busy"] == (40 + 60 + 70 + 100) / 1e3 / 10
    assert s["rows_histogram"] == {1: 1, 4: 2, 8: 1}
    assert s["median_ms_by_rows"] == {1: 40, 4: 65, 8: 100}
    assert s["mean_rows"] == 17 / 4


def test_summary_of_no_traffic_is_zero():
    s = summary([], window_s=60)
    assert s["ticks"] == 0 and s["tokens_per_s"] == 0 and s["rows_histogram"] == {}


def test_the_log_keeps_only_the_window_asked_for():
    log = TickLog(size=3)
    for at in (100, 150, 190, 200):
        log.add(tick(at, 1))
    assert [t.at for t in log.recent(window_s=60, now=200)] == [150, 190, 200]
    assert [t.at for t in log.recent(window_s=20, now=200)] == [190, 200]
