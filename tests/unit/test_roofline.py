"""The roofline formulas against hand-worked numbers, and the references' worked examples."""

import math

import pytest

from decoding.timing import calculator
from decoding.timing import roofline as rl


def test_floor_is_weight_bytes_over_bandwidth_7b_fp16_on_a10_is_23_ms():
    # 7e9 params × 2 bytes = 14 GB; 14 GB ÷ 600 GB/s = 23.33 ms
    assert rl.weight_bytes(7e9, 2) == 14e9
    assert rl.floor_ms(14e9, 600) == pytest.approx(23.333, abs=1e-3)


def test_floor_70b_fp16_at_3350_gbs_is_42_ms():
    assert rl.floor_ms(rl.weight_bytes(70e9, 2), 3350) == pytest.approx(41.79, abs=0.01)


def test_kv_cache_llama2_70b_4096_tokens_8_kv_heads_is_1_34_gb():
    # 2 × 80 layers × 8 KV heads × 128 head dim × 4096 tokens × 2 bytes
    assert rl.kv_bytes_per_sequence(80, 8, 128, 4096, 2) == 1_342_177_280


def test_twelve_llama2_70b_sequences_fit_beside_the_weights_on_two_80gb_gpus():
    # (160 GB − 140 GB weights − 3 GB overhead) ÷ 1.342 GB = 12.66 → 12 whole sequences
    assert rl.sequences_that_fit(160e9, 140e9, 1_342_177_280, 3e9) == 12


def test_no_sequence_fits_when_the_weights_do_not():
    assert rl.sequences_that_fit(80e9, 140e9, 1e9, 3e9) == 0


def test_reference_rows_reproduce_the_quoted_figures():
    a10, _, h100, two_a100 = (calculator.calculate(r) for r in calculator.REFERENCE_ROWS)
    assert a10["floor_ms"] == pytest.approx(23.3, abs=0.05)
    assert h100["floor_ms"] == pytest.approx(41.8, abs=0.05)
    assert two_a100["kv_gb_per_seq"] == pytest.approx(1.34, abs=0.005)
    assert two_a100["sequences_fit"] == 12
    assert a10["mbu"] is None  # nothing measured for a quoted row


def test_calculator_mbu_is_floor_over_measured_step():
    row = calculator.CalculatorRow(
        model="m",
        params_b=0.5,
        bytes_per_param=2,
        layers=4,
        kv_heads=2,
        head_dim=64,
        context=128,
        hardware="hw",
        bandwidth_gbs=100,
        memory_gb=16,
        measured_ms=20.0,
    )
    out = calculator.calculate(row)
    assert out["floor_ms"] == pytest.approx(10.0)  # 1 GB ÷ 100 GB/s
    assert out["mbu"] == pytest.approx(0.5)
    assert out["max_tokens_per_s"] == pytest.approx(100.0)


def test_decode_at_batch_1_in_fp16_does_one_flop_per_byte_and_batching_multiplies_it():
    params = 7e9
    assert rl.arithmetic_intensity(rl.decode_flops(params), rl.weight_bytes(params, 2)) == pytest.approx(1.0)
    assert rl.arithmetic_intensity(rl.decode_flops(params, batch=8), rl.weight_bytes(params, 2)) == pytest.approx(8.0)


def test_attention_adds_four_flops_per_layer_dimension_and_context_token():
    assert rl.attention_flops(layers=2, attn_dim=10, context=5) == 400
    assert rl.decode_flops(100, batch=2, layers=2, attn_dim=10, context=5) == 2 * (200 + 400)


def test_prefill_runs_the_lm_head_on_the_last_token_only():
    # 2 × 10 body params × 4 tokens + 2 × 3 head params, no attention term
    assert rl.prefill_flops(body_params=10, tokens=4, head_params=3) == 86
    # causal attention: each of 3 tokens sees (3 + 1) / 2 = 2 positions on average → 3 × 4 × 1 × 1 × 2
    assert rl.prefill_flops(0, 3, 0, layers=1, attn_dim=1) == 24


def test_ridge_point_a100_is_156_flops_per_byte():
    assert rl.ridge_point(312e12, 2000e9) == pytest.approx(156)


def test_roofline_is_bandwidth_bound_left_of_the_ridge_and_flat_right_of_it():
    assert rl.attainable_flops(1.0, peak_flops=100.0, bandwidth=10.0) == 10.0
    assert rl.attainable_flops(50.0, peak_flops=100.0, bandwidth=10.0) == 100.0


def test_mbu_and_mfu_are_achieved_over_measured_limits():
    assert rl.mbu(538e6, 64.0, 16.8) == pytest.approx(0.5004, abs=1e-3)  # 32.03 ms floor ÷ 64 ms
    assert rl.mfu(1e12, 1000.0, 2.0) == pytest.approx(0.5)


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, "600"])
def test_bandwidth_must_be_a_positive_number(bad):
    with pytest.raises(ValueError, match="bandwidth_gbs"):
        rl.floor_ms(1e9, bad)


def test_kv_size_rejects_zero_tokens_with_a_message_naming_it():
    with pytest.raises(ValueError, match="tokens"):
        rl.kv_bytes_per_sequence(2, 2, 64, 0, 2)


def test_request_estimate_reads_the_curves_log_log_and_counts_out_minus_one_steps():
    prefill = [(100, 100.0), (1000, 1000.0)]  # 1 ms per token: log-log line of slope 1
    decode = [(10, 10.0), (10_000, 10.0)]  # 10 ms per step whatever the context
    est = rl.estimate_request(prefill, decode, prompt=500, out=200)
    assert est["ttft_ms"] == pytest.approx(500.0)
    assert est["e2e_ms"] == pytest.approx(500.0 + 199 * 10.0)
    assert est["decode_share"] == pytest.approx(1990 / 2490)


def test_time_per_output_token_is_the_mean_after_the_first_token():
    # 4 tokens in 83 ms, the first after 50: the other 3 took 33 ms, 11 each on average
    assert rl.time_per_output_token(50.0, 83.0, 4) == 11.0
    assert math.isnan(rl.time_per_output_token(50.0, 50.0, 1))  # one token: no time per token after the first


def test_request_numbers_split_prefill_from_decode():
    class Loop:
        ms, context = [50.0, 10.0, 10.0, 13.0], [500, 501, 502, 503]

    r = rl.request_numbers(Loop())
    # the mean of the decode steps (11), not their median (10)
    assert (r["ttft_ms"], r["tpot_ms"], r["e2e_ms"], r["output_tokens"]) == (50.0, 11.0, 83.0, 4)
    assert r["decode_share"] == pytest.approx(33 / 83)
