"""The prefill vs decode lesson drawn: the timing sweeps, the roofline, the regime map, and the sentences under them."""
