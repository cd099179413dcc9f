"""The kernel timing behind "why simulated?": every real kernel that builds here runs on the model's own matrices
(float32 first), with the bytes its format reads; the app's choice per format is reported; the sentence follows
the numbers, not a script."""

from decoding.quantization.formats import FORMATS
from decoding.quantization.kernels import REFERENCE, kernel_speeds
from decoding.quantization.linear import KERNELS, SIMULATED
from decoding.quantization.measured import kernel_rows
from decoding.watch import Watch
from tests.helpers.made import KERNEL_ROWS
from visuals.quantization.kernels import kernels_said, kernels_table


def test_every_real_kernel_is_timed_on_the_models_own_matrices_float32_first(tiny):
    speeds = kernel_speeds(tiny.model, repeats=1)
    assert speeds[0].kernel == REFERENCE and speeds[0].format == "float32"
    assert {s.kernel for s in speeds[1:]} <= set(KERNELS) - {SIMULATED}
    head = tiny.model.get_output_embeddings()
    assert speeds[0].head_bytes == head.weight.numel() * 4
    for s in speeds:
        assert s.layers_ms > 0 and s.head_ms > 0
        if s.kernel != REFERENCE:  # each reads its format's bytes: int8 a quarter of float32's, plus its scales
            fmt = FORMATS[s.format]
            assert s.head_bytes == fmt.nbytes(head.out_features, head.in_features)
            assert s.layers_bytes < speeds[0].layers_bytes


def test_the_rows_say_which_kernel_the_app_runs_for_each_format(tiny):
    rows = kernel_rows(tiny, 1, Watch())
    used = {r["kernel"]: r["used"] for r in rows}
    assert used[REFERENCE]
    if "torch._weight_int8pack_mm" in used:  # weight-only int8 runs simulated on a CPU
        assert not used["torch._weight_int8pack_mm"]


def test_the_sentence_follows_the_numbers():
    said = kernels_said(KERNEL_ROWS)
    assert "float32 streams the layers' 400 MB at **10.0 GB/s**" in said
    assert "**slow int8** reads 4.0× fewer bytes yet takes 2.0× as long (1.2 GB/s)" in said
    assert "The app runs **int8** simulated on this device." in said
    assert "**fast** is 2.00× as fast over the layers" in said and "int8-activations** simulated" not in said
    assert "No low-bit kernel builds" in kernels_said(KERNEL_ROWS[:1])


def test_the_table_has_a_row_per_kernel_with_its_speed_against_float32():
    table = kernels_table(KERNEL_ROWS, "AMD EPYC CPU, 2 threads")
    assert "on AMD EPYC CPU, 2 threads" in table
    assert "| slow int8 | int8 | 100 | 1.2 | 0.50 | 25 | 1.2 | 0.50 | – |" in table
    assert "| fast | int8-activations | 100 | 5.0 | 2.00 | 25 | 12.5 | 5.00 | runs it |" in table
