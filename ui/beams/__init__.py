"""The "Beam search & repetition" tab: beam search beside greedy (layout, wiring, handlers), the repetition loops."""
