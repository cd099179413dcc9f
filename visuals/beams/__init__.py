"""The beam search & repetition lesson drawn: the beam tree (laid out, then drawn), greedy beside beams, repetition."""
