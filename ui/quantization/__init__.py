"""The "Quantization" tab: layout and wiring, handlers, the measured formats and the kernel survey."""
