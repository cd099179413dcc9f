"""The step-by-step tab: watch the model choose one token at a time (layout and wiring, handlers, view, links)."""
