"""The speculative decoding lesson drawn: one round as chips, the run's charts, and the words beside them."""
