"""The "Constrained decoding" tab: layout and wiring, handlers, and the N-samples measurement."""
