"""The constrained decoding lesson drawn: the answer with its forced tokens, mask rows, the N-samples comparison."""
