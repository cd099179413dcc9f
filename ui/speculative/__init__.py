"""The "Speculative decoding" tab: layout and wiring, handlers, the guided presets and the draft layer's logit lens."""
