"""The quantization lesson drawn: the side-by-side run, the stored file, each format measured, the kernel survey."""
