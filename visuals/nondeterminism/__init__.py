"""The temperature 0 & batching lesson drawn: batch rows compared token by token, the tally, their captions."""
