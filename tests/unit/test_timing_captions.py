"""The sentences of the "Prefill vs decode" tab from a hand-made measurement: every number they quote is read off
it (no model, no clock)."""

import html
import re

import pytest

from decoding.timing.limits import Probe
from tests.helpers.made import FULL, measured
from visuals.glossary import term
from visuals.machine import NAME_LIMIT, device_label
from visuals.timing.captions import captions, headline

# 80 characters, as long as a cloud machine's CPU name and its threads run
LONG_CPU = "Intel Xeon Platinum 848C Sapphire Rapids 4th Generation @ 2.4GHz CPU, 16 threads"


def test_headline_quotes_the_machine_and_its_measured_limits():
    text = headline(measured(**FULL))
    assert text.startswith('**<span title="a test CPU">a test CPU</span>**, float32, tiny model: measured in 12 s')
    assert "Memory bandwidth **10.0 GB/s**" in text and f"{term('matmul')} peak **100 GFLOP/s**" in text
    assert "weights read per decode step **500 MB** · floor" in text


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("Intel(R) Xeon(R) Processor @ 2.80GHz CPU, 1 thread", "Intel Xeon @ 2.80GHz CPU, 1 thread"),
        ("AMD EPYC 7B13 64-Core Processor CPU, 2 threads", "AMD EPYC 7B13 64-Core CPU, 2 threads"),
        ("NVIDIA H200", "NVIDIA H200"),
        (LONG_CPU, LONG_CPU[: NAME_LIMIT - len(", 16 threads") - 1] + "…, 16 threads"),
    ],
)
def test_the_headline_shows_any_device_name_in_at_most_a_few_words_with_the_whole_name_in_its_title(name, shown):
    """A cloud machine's CPU name runs to 80 characters: written whole, it wrapped the headline in projector mode and
    pushed the roofline off a 1280x720 screen. Its thread count is kept; the whole name is a tap away."""
    assert len(LONG_CPU) == 80
    line = headline(measured(device_name=name, **FULL)).split("\n\n")[0]
    assert line.startswith(f'**<span title="{html.escape(name)}">{html.escape(shown)}</span>**, float32, tiny model')
    assert len(device_label(name)) <= NAME_LIMIT


def test_a_measurement_cancelled_before_the_limits_says_so():
    assert headline(measured()) == "*Cancelled after 12 s, before the machine's limits were measured.*"
    assert captions(measured()) == ("", "", "", "", "")


def test_captions_compare_prefill_with_decode_per_token():
    _, phases, _, _, _ = captions(measured(**FULL))
    assert phases.startswith("Prefill of 64 tokens took 640 ms, 10.0 ms per token, while one decode step took")


def test_captions_compare_the_naive_loop_with_the_kv_cache():
    _, _, cache, _, _ = captions(measured(**FULL))
    assert "took 0.6 s re-running the whole sequence each step and 0.3 s with the KV cache (2.0× faster)" in cache
    assert "(200 → 300 ms)" in cache and cache.endswith("Both loops chose the same tokens.")


def test_captions_read_the_batch_gain_off_the_batch_sweep():
    _, _, _, batch, _ = captions(measured(**FULL))
    assert batch == (
        "One step for 4 sequences took 40 ms against 20 ms for one: 2.0× the time for 4× the tokens, "
        "100 tokens/s instead of 50."
    )


def test_the_request_caption_splits_time_to_first_token_from_the_rest():
    request = captions(measured(**FULL))[-1]
    ttft, tpot = term("TTFT", "Time to first token"), term("TPOT", "time per output token")
    assert request.startswith(f"{ttft} 100 ms, {tpot} 20.0 ms, end-to-end 0.16 s")
    assert "for a 8-token prompt and 4 output tokens" in request and "Scaled down" in request


def test_the_roofline_verdict_follows_from_the_measured_limits_not_from_how_busy_the_machine_was():
    # ridge 100 GFLOP/s / 10 GB/s = 10 FLOPs/byte; a float32 decode step does about half a FLOP per byte
    roofline, *_ = captions(measured(**FULL))
    assert re.search(r"did 0\.\d\d FLOPs per byte, \d+× below this machine's ridge point of 10\.0 FLOPs/byte", roofline)
    assert "it waits on memory" in roofline and re.search(r"It ran at \d+% of the memory bandwidth", roofline)
    # a machine whose matmul peak is so low that the ridge falls under the step's intensity says the other thing
    slow = dict(FULL, peak=Probe(0.000001, "TFLOP/s", [1.0], 1e9, "matmul"))
    roofline, *_ = captions(measured(**slow))
    assert "matmul units are the limit" in roofline and "waits on memory" not in roofline
